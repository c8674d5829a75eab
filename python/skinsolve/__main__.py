"""`python3 -m skinsolve COMMAND ...` runs the skinsolve CLI's commands
(info, pose, check, repair, bake, control, reweight; `--help` for each) with
the executable that belongs to the loaded library (see skinsolve.cli_path())."""
import os
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        from ._lib import cli_path
        exe = cli_path()
    except ImportError as e:  # no library: still find a CLI if one is configured
        exe = os.environ.get("SKINSOLVE_CLI", "skinsolve")
        if exe == "skinsolve" and not any(
                os.access(os.path.join(d, exe), os.X_OK)
                for d in os.environ.get("PATH", "").split(os.pathsep)):
            sys.stderr.write(f"python3 -m skinsolve: {e}\n")
            return 1
    try:
        os.execvp(exe, [exe] + list(argv))
    except OSError as e:
        sys.stderr.write(f"python3 -m skinsolve: cannot run the skinsolve CLI '{exe}': {e} "
                         "(set SKINSOLVE_CLI)\n")
        return 1


if __name__ == "__main__":
    sys.exit(main())
