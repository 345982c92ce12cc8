#!/usr/bin/env bash
# make demo: runs Causeway on the files source with the examples in
# examples/demo, two local echo backends and a fresh TLS certificate, then
# prints curl commands that work. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

ADDR=${DEMO_ADDR:-127.0.0.1} HTTP=${DEMO_HTTP:-8080} HTTPS=${DEMO_HTTPS:-8443}
HEALTH=${DEMO_HEALTH:-8081} METRICS=${DEMO_METRICS:-9113}
# nginx's workers run unprivileged and read the state directory (the Lua
# modules, the certificates) themselves, so it must not be below /root,
# where .cache usually leads.
STATE=${DEMO_STATE:-/var/lib/causeway-demo/state}
CAUSEWAY=${DEMO_CAUSEWAY:-bin/causeway} ECHO=${DEMO_ECHO:-bin/echo}
mkdir -p examples/demo/generated "$STATE"
go run ./hack/democert -host secure.causeway.test -name secure-tls -namespace demo -out examples/demo/generated/tls-secret.yaml

pids=()
cleanup() {
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "demo stopped"
}
trap cleanup INT TERM EXIT

"$ECHO" web=127.0.0.11:9001 api=127.0.0.12:9002 &
pids+=($!)
"$CAUSEWAY" controller --manifests examples/demo --state-dir "$STATE" \
  --listen-address "$ADDR" --http-port "$HTTP" --https-port "$HTTPS" \
  --health-port "$HEALTH" --metrics-port "$METRICS" &
pids+=($!)

for _ in $(seq 1 100); do
  if curl -fs "http://127.0.0.1:$HEALTH/readyz" >/dev/null 2>&1; then break; fi
  sleep 0.1
done
if ! curl -fs "http://127.0.0.1:$HEALTH/readyz" >/dev/null; then
  echo "the controller did not become ready; see the log above" >&2
  exit 1
fi

cat <<MSG

Causeway is serving examples/demo on $ADDR (HTTP $HTTP, HTTPS $HTTPS). Try:

  # Prefix / on demo.causeway.test -> service web
  curl -s --resolve demo.causeway.test:$HTTP:$ADDR http://demo.causeway.test:$HTTP/
  # Prefix /api -> service api (also /api/anything)
  curl -s --resolve demo.causeway.test:$HTTP:$ADDR http://demo.causeway.test:$HTTP/api/users
  # Exact /api/health -> service web (Exact beats the /api prefix)
  curl -s --resolve demo.causeway.test:$HTTP:$ADDR http://demo.causeway.test:$HTTP/api/health
  # TLS host: HTTP redirects to HTTPS (308), HTTPS serves the demo certificate
  curl -si --resolve secure.causeway.test:$HTTP:$ADDR http://secure.causeway.test:$HTTP/
  curl -s --cacert <(sed -n 's/^  tls.crt: //p' examples/demo/generated/tls-secret.yaml | base64 -d) \\
       --resolve secure.causeway.test:$HTTPS:$ADDR https://secure.causeway.test:$HTTPS/
  # Unknown host -> the controller's own 404
  curl -si -H 'Host: nowhere.test' http://$ADDR:$HTTP/
  # Readiness and metrics
  curl -s http://127.0.0.1:$HEALTH/readyz
  curl -s http://127.0.0.1:$METRICS/metrics | grep causeway_nginx

Edit examples/demo/*.yaml and the change applies without a restart.
Press Ctrl-C to stop.
MSG
wait "${pids[1]}"
