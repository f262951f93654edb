#!/usr/bin/env bash
# Every wire shape one binary speaks, written to OUT for a byte comparison
# between two builds (issue 33: the shapes must not move while the edges
# are rewritten):
#   OUT/openapi.json      the OpenAPI document, as served
#   OUT/mcp-tools.json    the MCP tools/list answer (names, descriptions, schemas)
#   OUT/cli/*.json        `--json` outputs of the commands
#   OUT/http/*.json       API answers, errors included
#   OUT/mcp/*.json        MCP tool results, errors included
# Volatile values (times, ids, temporary paths, dates) are replaced by
# placeholders, so two runs of one binary write identical files.
#
#   scripts/wire_snapshot.sh BIN OUT
#   diff -r OUT_BEFORE OUT_AFTER
set -euo pipefail
BIN=$(realpath "$1")
OUT=$2
rm -rf "$OUT"
mkdir -p "$OUT/cli" "$OUT/http" "$OUT/mcp"
OUT=$(realpath "$OUT")
WORK=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null || true; rm -rf "$WORK"' EXIT
SERVER=
export KEN_HOME=$WORK/home
unset KEN_STORE KEN_LLM_BASE_URL KEN_LLM_MODEL KEN_LLM_API_KEY KEN_RERANK_URL

# A small repository with two authors and a call chain.
R=$WORK/shop
mkdir -p "$R/shop" "$R/web"
git -C "$WORK" init -q shop
commit() { # author email date message
    git -C "$R" add -A
    GIT_AUTHOR_NAME=$1 GIT_AUTHOR_EMAIL=$2 GIT_COMMITTER_NAME=$1 GIT_COMMITTER_EMAIL=$2 \
        GIT_AUTHOR_DATE=$3 GIT_COMMITTER_DATE=$3 git -C "$R" commit -q -m "$4"
}
cat >"$R/shop/payments.py" <<'EOF'
class PaymentError(Exception):
    pass


def charge(card, amount):
    """Charge a card, retrying once on a timeout."""
    if amount <= 0:
        raise PaymentError("amount must be positive")
    return card.debit(amount)


def refund(card, amount):
    return charge(card, -amount)
EOF
commit "Ada Lovelace" ada@example.com "2024-03-01T10:00:00Z" "payments: charge and refund"
cat >"$R/shop/cart.py" <<'EOF'
from shop.payments import charge


class Cart:
    def __init__(self):
        self.items = []

    def total(self):
        return sum(price for _, price in self.items)

    def checkout(self, card):
        return charge(card, self.total())
EOF
cat >"$R/web/session.ts" <<'EOF'
export function refreshToken(token: string): string {
  return token + ".refreshed";
}

export class Session {
  constructor(public token: string) {}
  renew(): void {
    this.token = refreshToken(this.token);
  }
}
EOF
commit "Grace Hopper" grace@example.com "2024-03-05T09:30:00Z" "cart checkout and session refresh (fixes #12)"

norm() { # stdin JSON -> stdout JSON with volatile values replaced
    python3 -c '
import json, re, sys
work = sys.argv[1]
VOLATILE = {"took_ms", "ms", "elapsed_ms", "created", "created_at", "started", "started_at",
            "finished", "finished_at", "updated_at", "indexed_at", "last_used", "heartbeat",
            "secs", "seconds", "id", "job", "token", "version", "size_bytes", "bytes", "disk_bytes"}
def walk(v, key=None):
    if isinstance(v, dict):
        return {k: ("<volatile>" if k in VOLATILE and not isinstance(x, (dict, list)) else walk(x, k)) for k, x in v.items()}
    if isinstance(v, list):
        return [walk(x) for x in v]
    if isinstance(v, str):
        if v[:1] in "{[":
            try:
                return {"json_text": walk(json.loads(v))}
            except ValueError:
                pass
        v = v.replace(work, "<work>")
        v = re.sub(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?", "<time>", v)
        return v
    return v
raw = sys.stdin.read()
try:
    doc = json.loads(raw)
except ValueError:
    print(json.dumps({"not_json": raw.replace(work, "<work>")}, indent=1))
    sys.exit(0)
print(json.dumps(walk(doc), indent=1, sort_keys=False, ensure_ascii=False))
' "$WORK"
}

K() { "$BIN" --color never "$@"; }
K index "$R" --no-embed --name shop >/dev/null 2>&1

cli() { # name args...
    local name=$1
    shift
    local code=0
    K --json "$@" >"$WORK/stdout" 2>"$WORK/stderr" || code=$?
    norm <"$WORK/stdout" >"$OUT/cli/$name.json"
    if [ "$code" != 0 ]; then
        { echo "exit $code"; sed "s|$WORK|<work>|g" "$WORK/stderr"; } >"$OUT/cli/$name.stderr"
    fi
}
cli search search charge card -n 5
cli search-files search checkout --files --mode lexical
cli search-none search zzqqxx_nothing
cli ask ask how is a card charged --offline
cli who who payments
cli people people
cli log-search log-search checkout
cli callers callers charge
cli callees callees Cart.checkout
cli impact impact charge --depth 3
cli status status
cli report report --since all
cli jobs jobs list
cli error-unknown-repo search charge --repo nope
cli error-unknown-symbol callers no_such_symbol

# The server, with one token for the repository.
TOKEN=$(K --json token create --repo shop --scope index | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
K serve --addr "127.0.0.1:$PORT" --no-jobs >"$WORK/serve.log" 2>&1 &
SERVER=$!
for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break
    sleep 0.1
done
curl -sf "http://127.0.0.1:$PORT/openapi.json" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), indent=1))' >"$OUT/openapi.json"
api() { # name path [curl args...]
    local name=$1 path=$2
    shift 2
    { curl -s -H "Authorization: Bearer $TOKEN" "$@" "http://127.0.0.1:$PORT$path" || true; } | norm >"$OUT/http/$name.json"
}
api search "/api/v1/search?q=charge%20card&n=5"
api search-highlight "/api/v1/search?q=refreshToken&highlight=true&files=true"
api search-bad-n "/api/v1/search?q=x&n=0"
api search-bad-mode "/api/v1/search?q=x&mode=fuzzy"
api search-no-q "/api/v1/search"
api ask "/api/v1/ask" -H 'Accept: application/json' -H 'Content-Type: application/json' -d '{"question":"how is a card charged","offline":true}'
api ask-bad "/api/v1/ask" -H 'Accept: application/json' -H 'Content-Type: application/json' -d '{"question":"x","n":8.5}'
api ask-unknown-field "/api/v1/ask" -H 'Accept: application/json' -H 'Content-Type: application/json' -d '{"question":"x","bogus":1}'
api who "/api/v1/who?q=payments"
api people "/api/v1/people"
api log "/api/v1/log?q=checkout"
api callers "/api/v1/callers?symbol=charge"
api callees "/api/v1/callees?symbol=Cart.checkout"
api impact "/api/v1/impact?symbol=charge&depth=3"
api impact-bad-depth "/api/v1/impact?symbol=charge&depth=99"
api symbols "/api/v1/symbols?q=Cart"
api repos "/api/v1/repos"
api repo "/api/v1/repos/shop"
api repo-missing "/api/v1/repos/nope"
api file "/api/v1/repos/shop/file?path=shop/cart.py&start=2&end=6"
api file-highlight "/api/v1/repos/shop/file?path=web/session.ts&highlight=true"
api blame "/api/v1/repos/shop/blame?path=shop/cart.py"
api person "/api/v1/people/ada@example.com"
api report "/api/v1/repos/shop/report?since=all&top=3"
api report-bad-format "/api/v1/repos/shop/report?format=pdf"
api jobs "/api/v1/jobs"
api index-bad-body "/api/v1/repos/shop/index" -X POST -H 'Content-Type: application/json' -d '[1]'
api no-route "/api/v1/nothing"
curl -s "http://127.0.0.1:$PORT/healthz" | norm >"$OUT/http/healthz.json"
kill $SERVER
wait $SERVER 2>/dev/null || true
SERVER=

# MCP over stdio: the tool list, then each tool.
python3 - "$BIN" "$OUT" "$WORK" <<'EOF'
import json, subprocess, sys
bin, out, work = sys.argv[1:4]
p = subprocess.Popen([bin, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, text=True)
n = 0
def call(method, params=None, notify=False):
    global n
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    if not notify:
        n += 1
        msg["id"] = n
    p.stdin.write(json.dumps(msg) + "\n")
    p.stdin.flush()
    if notify:
        return None
    while True:
        r = json.loads(p.stdout.readline())
        if r.get("id") == n:
            return r
call("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                    "clientInfo": {"name": "wire-snapshot", "version": "0"}})
call("notifications/initialized", notify=True)
tools = call("tools/list")["result"]
json.dump(tools, open(f"{out}/mcp-tools.json", "w"), indent=1, ensure_ascii=False)
calls = {
    "search_code": {"query": "charge card", "n": 5},
    "search_code-filters": {"query": "token", "lang": "ts", "path": "web/**", "mode": "lexical"},
    "search_code-bad-mode": {"query": "x", "mode": "fuzzy"},
    "find_symbol": {"name": "Cart"},
    "read_range": {"repo": "shop", "path": "shop/cart.py", "start_line": 2, "end_line": 6},
    "read_range-missing": {"repo": "shop", "path": "nope.py"},
    "callers": {"symbol": "charge"},
    "impact": {"symbol": "charge", "depth": 2},
    "who_knows": {"query": "payments"},
    "ask": {"question": "how is a card charged"},
    "repo_status": {},
    "index_repository-missing": {"repo": "nope"},
}
for name, args in calls.items():
    tool = name.split("-")[0]
    r = call("tools/call", {"name": tool, "arguments": args})
    with open(f"{out}/mcp/{name}.raw", "w") as f:
        json.dump(r.get("result", r.get("error")), f, ensure_ascii=False)
p.stdin.close()
p.wait(timeout=30)
EOF
for f in "$OUT"/mcp/*.raw; do
    norm <"$f" >"${f%.raw}.json"
    rm "$f"
done
echo "wrote $(find "$OUT" -type f | wc -l) files to $OUT"
