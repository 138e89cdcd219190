#!/usr/bin/env bash
# Clones over HTTPS with `torchfix build --repo https://...`, as a user's
# recipe does: the real `git http-backend` behind TLS on 127.0.0.1
# (tests/support/https_git_server.py), with a certificate authority made here
# by the openssl CLI and handed over through SSL_CERT_FILE. Checks:
#  1. with another CA the clone fails on the certificate and leaves nothing;
#  2. a clone cut mid-transfer (the server stalls after 64 KiB, torchfix gets
#     SIGINT) leaves nothing at the target, and the rerun clones;
#  3. a clone through an HTTP CONNECT proxy named by HTTPS_PROXY.
# Used by CTest on the suite's binary and by .ci/package on the wheel's
# static binary. Usage: tests/build/https_clone_test.sh TORCHFIX
# Exit: 0 passed, 77 skipped (a tool is missing; the reason is printed), else failed.
set -euo pipefail
tf=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
for t in git openssl python3 /usr/lib/git-core/git-http-backend; do
  command -v "$t" >/dev/null || { echo "https_clone_test: skipped: $t is not installed"; exit 77; }
done
tmp=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "https_clone_test: FAILED: $*" >&2; exit 1; }
say() { echo "https_clone_test: $*"; }

# A certificate authority and a server certificate for 127.0.0.1 (P-256: fast).
cd "$tmp"
ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 2 -subj /CN=torchfix-test-ca 2>/dev/null
openssl req -x509 "${ec[@]}" -keyout other.key -out other-ca.pem -days 2 -subj /CN=another-ca 2>/dev/null
openssl req "${ec[@]}" -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 2>/dev/null
# The name in the CN, no subjectAltName: libgit2 1.5's OpenSSL check turns an
# IP address SAN that matches into a mismatch (`!!memcmp`), and its mbedTLS
# matches DNS names only; both accept a CN when there is no SAN. A host name
# with a DNS SAN (github.com) passes both.
openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 2>/dev/null

# The project: a setup.py that stops its build at once (the clone is under
# test, not the build) and 2 MB of random bytes, so the pack is large enough
# to cut mid-transfer.
git() { command git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main "$@"; }
mkdir -p up/proj srv
git -C up/proj init -q
printf 'raise SystemExit("https_clone_test: cloned; the build is not under test")\n' >up/proj/setup.py
head -c 2000000 /dev/urandom >up/proj/blob.bin
echo "cloned over https" >up/proj/marker.txt
git -C up/proj add .
git -C up/proj commit -q -m init
git clone -q --bare up/proj srv/proj.git

# Starts the server (extra arguments: https_git_server.py options); sets $port and $proxy_port.
start_server() {
  rm -f ready ready.stall
  python3 "$root/tests/support/https_git_server.py" srv srv.pem srv.key ready "$@" &
  pids+=($!)
  for _ in $(seq 100); do [[ -f ready ]] && break; sleep 0.1; done
  [[ -f ready ]] || fail "the HTTPS server did not start"
  read -r port proxy_port <ready || true
}

# Runs torchfix build --repo on the server into work dir $1 (env from the caller).
# SIGINT back to its default first: a shell started in the background (a CI
# runner's, nohup) passes SIGINT on ignored, no shell can undo that, and
# torchfix rightly keeps an inherited ignore, so step 2's Ctrl-C would be lost.
clone() {
  env --default-signal=INT "$tf" build --repo "https://127.0.0.1:$port/proj.git" --ref main --gpu sm_86 \
    --work-dir "$tmp/$1"
}
# Prints the folder the clone went to (empty when there is none).
cloned_dir() { find "$tmp/$1" -name marker.txt -printf '%h\n' 2>/dev/null | head -n1; }
# Fails when work dir $1 holds a repository at the target (a half clone).
expect_no_target() {
  local g
  for g in $(find "$tmp/$1" -name .git -prune -printf '%h\n' 2>/dev/null); do
    [[ $(basename "$g") == .*.torchfix-clone ]] || fail "$2: a repository was left at $g"
  done
}

start_server --stall-after 65536 --proxy-log proxy.log
unset HTTPS_PROXY https_proxy HTTP_PROXY http_proxy ALL_PROXY all_proxy SSL_CERT_DIR
export NO_PROXY="" no_proxy=""

say "1. another CA: the clone must fail on the certificate and leave nothing"
rc=0
SSL_CERT_FILE=$tmp/other-ca.pem clone w1 >out1 2>&1 || rc=$?
((rc != 0)) || fail "1: cloned although the server's CA is not trusted"
grep -Eiq 'certificate|ssl' out1 || { cat out1; fail "1: the error does not name the certificate"; }
grep -q 'could not load ssl libraries' out1 && fail "1: torchfix found no OpenSSL (libssl.so.3 or .1.1)"
expect_no_target w1 "1"
[[ -z $(find "$tmp/w1" -name '*.torchfix-clone' 2>/dev/null) ]] || fail "1: the staging folder of a failed clone was left"

export SSL_CERT_FILE=$tmp/ca.pem
say "2. a clone cut mid-transfer by SIGINT, then the rerun"
# Job control on: the background job gets its own process group and keeps
# SIGINT (a non-interactive shell starts background jobs with it ignored),
# and the group gets the signal, as from Ctrl-C.
set -m
clone w2 >out2 2>&1 &
tfpid=$!
set +m
pids+=("$tfpid")
for _ in $(seq 600); do [[ -f ready.stall ]] && break; sleep 0.1; done
[[ -f ready.stall ]] || { cat out2; fail "2: the transfer never reached the stall"; }
kill -INT -- "-$tfpid"
for _ in $(seq 300); do kill -0 "$tfpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$tfpid" 2>/dev/null; then
  kill -KILL -- "-$tfpid"
  fail "2: torchfix did not stop within 30 s of SIGINT"
fi
rc=0
wait "$tfpid" || rc=$?
((rc != 0)) || fail "2: torchfix exited 0 after SIGINT"
expect_no_target w2 "2"
rc=0
clone w2 >out2b 2>&1 || rc=$?
dir=$(cloned_dir w2)
[[ -n $dir && $(cat "$dir/marker.txt") == "cloned over https" ]] || { cat out2b; fail "2: the rerun did not clone"; }
grep -q 'has no front-end' out2b && fail "2: the rerun tripped over the first clone"
cmp -s "$dir/blob.bin" up/proj/blob.bin || fail "2: blob.bin differs from upstream"

say "3. through the CONNECT proxy of HTTPS_PROXY"
HTTPS_PROXY=http://127.0.0.1:$proxy_port clone w3 >out3 2>&1 || true
[[ -n $(cloned_dir w3) ]] || { cat out3; fail "3: no clone through the proxy"; }
grep -q "CONNECT 127.0.0.1:$port" proxy.log || fail "3: the clone did not go through the proxy"
say "passed"
