# Stands in for pypa's get-pip.py in ansible-test's cache: installs pip from the local pip wheel.
#
# ansible-test creates each sanity virtualenv without pip, then runs
# `python quiet_pip.py --disable-pip-version-check pip==X --no-setuptools --no-wheel` with
# GET_PIP pointing at a get-pip.py it downloads once. This file is installed there by
# tests/sanity/run.sh, so no download happens: pip runs from its own wheel (a wheel is importable
# as a zip) and installs that wheel, with the index and wheel directory taken from the pip.conf
# that run.sh writes (no-index, find-links).
import glob
import os
import sys

FLAGS_OF_GET_PIP = ('--no-setuptools', '--no-wheel')


def main():
    wheel_dirs = [line.split('=', 1)[1].strip() for line in open(os.path.expanduser('~/.config/pip/pip.conf'))
                  if line.startswith('find-links')]
    wheels = sorted(glob.glob(os.path.join(wheel_dirs[0], 'pip-*.whl')))
    if not wheels:
        sys.exit('get_pip stand-in: no pip wheel in %s' % wheel_dirs[0])
    sys.path.insert(0, wheels[-1])
    from pip._internal.cli.main import main as pip_main  # pylint: disable=import-outside-toplevel
    args = [a for a in sys.argv[1:] if a not in FLAGS_OF_GET_PIP]
    sys.exit(pip_main(['install', '--upgrade', '--force-reinstall'] + args))


if __name__ == '__main__':
    main()
