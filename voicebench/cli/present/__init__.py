"""What the terminal shows: rich tables and lines made from the library's results.

The library returns data; this package (with the report's templates, ``voicebench.reporting``)
is where it becomes tables and sentences. Nothing outside ``voicebench/cli/`` imports rich.
"""
