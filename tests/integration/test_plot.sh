#!/bin/sh
# Runs test_plot.py with a python3 that has numpy (scripts/install-deps.sh
# installs python3-numpy for the system python3); skips (77) without one.
for py in ${PYTHON:-} python3 /usr/bin/python3; do
	if "$py" -c 'import numpy' 2>/dev/null; then
		exec "$py" "$(dirname "$0")/test_plot.py"
	fi
done
echo "SKIP: no python3 with numpy (package python3-numpy)"
exit 77
