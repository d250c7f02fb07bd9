"""The expression language that DiffStream predicates and CEP guards share."""
