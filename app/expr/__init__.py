"""The expression language that DiffStream predicates and CEP guards share."""

from app.expr.parser import Expr, ExprError, ExprEvalError, compile_predicate, parse_expr

__all__ = ["Expr", "ExprError", "ExprEvalError", "compile_predicate", "parse_expr"]
