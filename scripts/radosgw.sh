#!/usr/bin/env bash
# Starts (or reuses) a throwaway one-node Ceph cluster on memstore with radosgw, for the S3 conformance suite.
#
# Usage: scripts/radosgw.sh [start|stop|status]
#   start   start a cluster (or reuse the one already answering), make sure the user and bucket exist,
#           then print shell-style lines on stdout:
#             RADOSGW_ENDPOINT=http://127.0.0.1:7480
#             RADOSGW_ACCESS_KEY=...  RADOSGW_SECRET_KEY=...  RADOSGW_BUCKET=...  RADOSGW_DIR=...
#   stop    stop the daemons of that cluster and remove its directory (all data is in memory anyway)
#   status  exit 0 when the gateway answers, 1 otherwise
#
# Environment (all optional):
#   RADOSGW_PORT        gateway port (default 7480); the monitor listens on RADOSGW_PORT+1
#   RADOSGW_DIR         state directory (default ${TMPDIR:-/tmp}/sessync-radosgw-$RADOSGW_PORT)
#   RADOSGW_ACCESS_KEY  S3 access key of the test user (default sessync-test-access)
#   RADOSGW_SECRET_KEY  its secret (default sessync-test-secret-key)
#   RADOSGW_BUCKET      bucket to create (default sessync); created only when curl is installed
#
# Needs the Debian packages ceph-mon ceph-osd radosgw (apt-get install -y ceph-mon ceph-osd radosgw).
# Nothing is written outside RADOSGW_DIR: config, monitor store, logs, sockets and pid files all live there,
# so several clusters on different ports can coexist and `stop` leaves nothing behind.
set -euo pipefail

CMD=${1:-start}
PORT=${RADOSGW_PORT:-7480}
MON_PORT=$((PORT + 1))
DIR=${RADOSGW_DIR:-${TMPDIR:-/tmp}/sessync-radosgw-$PORT}
ACCESS=${RADOSGW_ACCESS_KEY:-sessync-test-access}
SECRET=${RADOSGW_SECRET_KEY:-sessync-test-secret-key}
BUCKET=${RADOSGW_BUCKET:-sessync}
ENDPOINT=http://127.0.0.1:$PORT
CONF=$DIR/ceph.conf

log() { echo "radosgw.sh: $*" >&2; }
die() { log "$*"; exit 1; }

# The gateway answers an anonymous GET / with an XML bucket listing (200) or an error document.
gateway_up() { curl -s -o /dev/null --max-time 2 "$ENDPOINT/" 2>/dev/null || bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT" 2>/dev/null; }

# The daemons fork into the background: each is started with fd 9 (the start lock) closed and its stdio
# on a log file, or it would hold the lock, or the caller's output pipe, for as long as it runs.

# Pids of this cluster's daemons, from the pid files that only this directory holds.
cluster_pids() {
  local f
  for f in "$DIR"/run/*.pid; do
    [ -f "$f" ] && cat "$f"
  done
  return 0
}

stop_cluster() {
  local pid pids
  pids=$(cluster_pids)
  for pid in $pids; do kill "$pid" 2>/dev/null || true; done
  for _ in $(seq 1 50); do
    local alive=0
    for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pid in $pids; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$DIR"
}

ensure_user() {
  if radosgw-admin -c "$CONF" user info --uid=sessync-test >/dev/null 2>&1; then return 0; fi
  radosgw-admin -c "$CONF" user create --uid=sessync-test --display-name="sessync test" \
    --access-key="$ACCESS" --secret="$SECRET" >/dev/null
}

ensure_bucket() {
  if ! command -v curl >/dev/null; then
    log "curl is not installed: bucket $BUCKET not created (create it with any S3 client)"
    return 0
  fi
  # curl 7.x signs without the payload hash header that radosgw requires (SignatureDoesNotMatch): send it.
  local EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
  # 200 = created, 409 BucketAlreadyOwnedByYou / BucketAlreadyExists = already there.
  local code
  code=$(curl -s -o "$DIR/bucket-create.xml" -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" \
    -H "x-amz-content-sha256: $EMPTY_SHA256" \
    --user "$ACCESS:$SECRET" "$ENDPOINT/$BUCKET")
  case "$code" in
    200|409) ;;
    *) die "creating bucket $BUCKET answered HTTP $code: $(cat "$DIR/bucket-create.xml")" ;;
  esac
}

print_env() {
  echo "RADOSGW_ENDPOINT=$ENDPOINT"
  echo "RADOSGW_ACCESS_KEY=$ACCESS"
  echo "RADOSGW_SECRET_KEY=$SECRET"
  echo "RADOSGW_BUCKET=$BUCKET"
  echo "RADOSGW_DIR=$DIR"
}

write_conf() {
  local fsid
  fsid=$(cat /proc/sys/kernel/random/uuid)
  cat >"$CONF" <<EOF
[global]
fsid = $fsid
mon host = v1:127.0.0.1:$MON_PORT
public network = 127.0.0.0/8
ms bind msgr2 = false
auth cluster required = none
auth service required = none
auth client required = none
auth supported = none
osd objectstore = memstore
memstore device bytes = 2147483648
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
run dir = $DIR/run
pid file = $DIR/run/\$name.pid
admin socket = $DIR/run/\$name.asok
log file = $DIR/log/\$name.log
# The monitor's cluster and audit logs default to /var/log/ceph: keep them in DIR too.
mon cluster log file = default=$DIR/log/cluster.\$channel.log cluster=$DIR/log/cluster.log
mon data = $DIR/mon/\$name
osd data = $DIR/osd/\$name
keyring = $DIR/keyring
crash dir = $DIR/crash
exporter sock dir = $DIR/run
# Enough for a test cluster; the defaults reserve far more threads and memory.
osd memory target = 536870912
mon osd full ratio = 0.97

[client.rgw.sessync]
rgw frontends = beast endpoint=127.0.0.1:$PORT
rgw data = $DIR/rgw
rgw dns name = 127.0.0.1
rgw enable usage log = false
EOF
}

start_cluster() {
  for bin in ceph-mon ceph-osd radosgw radosgw-admin ceph monmaptool; do
    command -v "$bin" >/dev/null || die "$bin not found: install it with apt-get install -y ceph-mon ceph-osd radosgw"
  done
  if bash -c "exec 3<>/dev/tcp/127.0.0.1/$MON_PORT" 2>/dev/null; then
    die "port $MON_PORT (monitor, RADOSGW_PORT+1) is taken: set RADOSGW_PORT to a port with a free neighbour"
  fi
  mkdir -p "$DIR"/{run,log,mon,osd/osd.0,rgw,crash}
  write_conf
  local fsid
  fsid=$(sed -n 's/^fsid = //p' "$CONF")

  log "starting monitor on 127.0.0.1:$MON_PORT (state in $DIR)"
  monmaptool --create --clobber --fsid "$fsid" --addv a "[v1:127.0.0.1:$MON_PORT]" "$DIR/monmap" >/dev/null
  ceph-mon -c "$CONF" --mkfs -i a --monmap "$DIR/monmap" >/dev/null
  ceph-mon -c "$CONF" -i a 9>&- </dev/null >>"$DIR/log/daemons.log" 2>&1
  timeout 60 ceph -c "$CONF" --connect-timeout 55 mon stat >/dev/null || die "monitor did not come up; see $DIR/log/mon.a.log"

  log "starting memstore OSD"
  local id
  id=$(ceph -c "$CONF" osd create)
  [ "$id" = 0 ] || die "expected OSD id 0, got $id"
  ceph-osd -c "$CONF" -i 0 --mkfs >/dev/null 2>"$DIR/log/osd-mkfs.err" || die "ceph-osd --mkfs failed: $(head -c 2000 "$DIR/log/osd-mkfs.err")"
  ceph -c "$CONF" osd crush add osd.0 1.0 host=localhost root=default >/dev/null 2>&1 || true
  ceph-osd -c "$CONF" -i 0 9>&- </dev/null >>"$DIR/log/daemons.log" 2>&1
  # Waits are generous: on a loaded 2-core machine the daemons can take several times their usual 5 s.
  for _ in $(seq 1 120); do
    ceph -c "$CONF" osd stat 2>/dev/null | grep -q '1 up' && break
    sleep 0.5
  done
  ceph -c "$CONF" osd stat | grep -q '1 up' || die "OSD did not come up; see $DIR/log/osd.0.log"

  log "starting radosgw on $ENDPOINT"
  radosgw -c "$CONF" -n client.rgw.sessync 9>&- </dev/null >>"$DIR/log/daemons.log" 2>&1
  for _ in $(seq 1 180); do
    gateway_up && break
    sleep 0.5
  done
  gateway_up || die "radosgw did not answer on $ENDPOINT; see $DIR/log/client.rgw.sessync.log"
}

# One try at start_cluster in a subshell (so errexit holds inside it); a half-started cluster is worse than
# none, so on failure it names the failing command, shows the log tails and stops whatever did start.
start_attempt() {
  set +e
  (
    set -e
    trap 'FAILED="$BASH_COMMAND (exit $?)"' ERR
    trap 'log "start failed at: ${FAILED:-?}; last log lines:"; tail -n 20 "$DIR"/log/*.log >&2 2>/dev/null; stop_cluster' EXIT
    start_cluster
    trap - EXIT
  )
  local rc=$?
  set -e
  return $rc
}

case "$CMD" in
  start)
    mkdir -p "$(dirname "$DIR")"
    # One starter at a time per port: concurrent test processes wait here, then reuse the cluster.
    exec 9>"$DIR.lock"
    flock -w 180 9 || die "timed out waiting for another radosgw.sh start on port $PORT"
    # A cluster whose gateway answers but whose storage is wedged (its admin calls hang) is stale too: the check is
    # bounded, or every later start would wait on it forever.
    if [ -f "$CONF" ] && gateway_up && timeout 60 radosgw-admin -c "$CONF" user info --uid=sessync-test >/dev/null 2>&1; then
      log "reusing the cluster already running on $ENDPOINT"
    else
      # A directory without a working gateway is left over from a crash: clear it and start afresh.
      [ -d "$DIR" ] && { log "clearing stale state in $DIR"; stop_cluster; }
      gateway_up && die "port $PORT is taken by something that is not this cluster; set RADOSGW_PORT"
      # A slow machine can make a daemon miss its start; one more try from scratch costs 20 s, a red suite more.
      start_attempt || { log "retrying the start once"; start_attempt || die "could not start a cluster on port $PORT"; }
    fi
    ensure_user
    ensure_bucket
    print_env
    ;;
  stop)
    exec 9>"$DIR.lock"
    flock -w 180 9 || die "timed out waiting for the lock on $DIR.lock"
    stop_cluster
    rm -f "$DIR.lock"
    log "stopped"
    ;;
  status)
    [ -f "$CONF" ] && gateway_up
    ;;
  *)
    die "unknown command $CMD (start|stop|status)"
    ;;
esac
