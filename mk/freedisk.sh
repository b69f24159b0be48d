#!/bin/sh
# freedisk.sh before|after: says when the disk `make test` writes to is (nearly) full, so that a run that fails for
# want of disk says so, not only in its packages' "no space left on device". Before the tests: less than NEED_GIB
# free; after a failed run: less than 1 GiB left. It only warns: the run decides.
# A run of `make test` takes about 5 GiB at its peak on a fresh machine (measured: Go's build cache 2.4 GiB, the
# race-built test binaries and the tests' NATS stores the rest).
NEED_GIB=${NEED_GIB:-8}
GO=${GO:-go}
when=$1
seen=
for dir in "$($GO env GOCACHE)" "${TMPDIR:-/tmp}"; do
	[ -d "$dir" ] || continue
	fs=$(df -Pk "$dir" | awk 'NR==2 { print $6 }')
	case " $seen " in *" $fs "*) continue ;; esac
	seen="$seen $fs"
	avail=$(df -Pk "$dir" | awk 'NR==2 { print int($4 / 1048576) }')
	case $when in
	before)
		if [ "$avail" -lt "$NEED_GIB" ]; then
			echo "make test: only $avail GiB free on the disk of $dir; a run takes about 5 GiB at its peak." \
				"Tests failing with 'no space left on device' failed for want of disk: free some (go clean -cache) and run again." >&2
		fi
		;;
	after)
		if [ "$avail" -lt 1 ]; then
			echo "make test: the disk of $dir is full ($avail GiB left): failures above may be for want of disk, not of the code." >&2
		fi
		;;
	esac
done
