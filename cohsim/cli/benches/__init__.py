"""The real benchmarks' faces on the command line, one module each (`cohsim bench KIND`).

Each module holds one benchmark's flags, mirroring the C program's own and checked here (a
malformed one is argparse's usage error, exit 2, before anything is built), the C program's
argv made from them (`c_args`) and its human summary (`show`); `flags` holds the checks they
share. cohsim.cli.bench registers them, runs the program and prints.
"""
