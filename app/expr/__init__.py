"""The one expression tokenizer/parser core that DiffStream predicates and CEP patterns share.

`core` is the tokenizer loop and parser cursor, `parser` the expression grammar
(tokens and AST), `evaluate` turns an AST into closures. No Qt, no Spark.
"""

from app.expr.evaluate import Expr, ExprEvalError, compile_predicate, parse_expr
from app.expr.parser import ExprError, ExprNode

__all__ = ["Expr", "ExprError", "ExprEvalError", "ExprNode", "compile_predicate", "parse_expr"]
