"""DiffStream: are two streams equivalent up to a dependence relation?"""
