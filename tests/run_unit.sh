#!/bin/sh
# Run each unit-test binary (built with ASan/UBSan) and add up their
# "N passed, N failed" lines into one.
set -u
passed=0; failed=0; broken=0
for t in "$@"; do
	out=$("$t" 2>&1); rc=$?
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	if [ -z "$line" ] || [ $rc -ne 0 ]; then
		printf '%s\n' "$out" >&2
		echo "unit: $(basename "$t") FAILED (exit $rc)" >&2
	fi
	if [ -z "$line" ]; then broken=$((broken + 1)); continue; fi
	p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
	passed=$((passed + p)); failed=$((failed + f))
done
failed=$((failed + broken))
echo "unit tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
