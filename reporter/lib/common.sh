# shellcheck shell=bash
# homefleet shell helpers shared by the host agent and its installer: reading JSON (through perl's
# JSON::PP, which every Proxmox VE node has because pve-manager depends on it), SemVer 2.0
# precedence, HTTP with an optional certificate-key pin, and the checks of the signed release
# manifest and of the agent file it describes. Both scripts are served as single files (they are
# piped into bash), so the controller replaces each script's include line with this file.
#
# Globals read: SERVER_URL, TLS_PIN, CONNECT_TIMEOUT, CURL_MAX_TIME, HTTP_MAX_TIME (optional),
# MAX_DOWNLOAD_BYTES. Globals written: REPLY, HTTP_CODE, CURL_EXIT, MANIFEST_ISSUED.

# ---------------------------------------------------------------------------------------------
# Reading JSON

# json_parse NAME FILE: decodes the JSON in FILE into the associative array NAME (declared by the
# caller with declare -A), one entry per value: the key is its path (`.` the document, `commands`,
# `commands.0.vmid`; object keys that are not plain names are skipped, so no two values can share a
# path), the value is a type letter followed by the value: s string, n number, b boolean (btrue,
# bfalse), z null, a array and o object (followed by their length). 1, with NAME empty, when FILE
# is not JSON: nothing of a document that does not parse is ever read. Perl only decodes the text;
# nothing in it is evaluated.
json_parse() {
  local -n __jp_into="$1"
  local __jp_key __jp_value
  # Paths cannot hold NUL, and a string that does refuses the whole document: NUL separates the output.
  # shellcheck disable=SC2016 # perl code: its $ are perl's
  local __jp_program='
    use strict; use warnings; use B;
    binmode STDIN; binmode STDOUT;
    my $text = do { local $/; <STDIN> };
    my $data = JSON::PP->new->utf8->allow_nonref->max_depth(64)->decode(defined $text ? $text : "");
    my @out;
    sub put { die "a value holds NUL\n" if index($_[1], "\0") >= 0; push @out, $_[0], $_[1]; }
    sub walk {
      my ($path, $value) = @_;
      my $at = sub { $path eq "." ? $_[0] : "$path.$_[0]" };
      if (JSON::PP::is_bool($value)) { put($path, $value ? "btrue" : "bfalse"); }
      elsif (!defined $value) { put($path, "z"); }
      elsif (ref $value eq "HASH") {
        put($path, "o" . scalar(keys %$value));
        for my $key (sort keys %$value) { walk($at->($key), $value->{$key}) if $key =~ /^[A-Za-z_][A-Za-z0-9_-]{0,63}\z/; }
      }
      elsif (ref $value eq "ARRAY") {
        put($path, "a" . scalar(@$value));
        walk($at->($_), $value->[$_]) for 0 .. $#$value;
      }
      elsif (ref $value) { die "unexpected value\n"; }
      else {
        # A number as JSON wrote it, not a string that looks like one: decided before it is printed.
        my $flags = B::svref_2object(\$value)->FLAGS;
        my $number = ($flags & (B::SVp_IOK | B::SVp_NOK)) && !($flags & B::SVp_POK);
        my $text = "$value";
        utf8::encode($text);
        put($path, ($number ? "n" : "s") . $text);
      }
    }
    walk(".", $data);
    print join("\0", @out, "!", "ok"), "\0";
  '
  __jp_into=()
  while IFS= read -r -d '' __jp_key && IFS= read -r -d '' __jp_value; do
    __jp_into["$__jp_key"]="$__jp_value"
  done < <(perl -MJSON::PP -e "$__jp_program" <"$2" 2>/dev/null || true)
  # The last pair is written only once the whole document was decoded.
  if [[ "${__jp_into['!']-}" != ok ]]; then
    __jp_into=()
    return 1
  fi
}

# json_get NAME PATH TYPES: the value at PATH of the parsed document NAME into REPLY (an array's or
# an object's length for a or o) when its type letter is one of TYPES; 1 when absent, 2 when it is
# of another type.
json_get() {
  local -n __jg_from="$1"
  local __jg_value="${__jg_from["$2"]-}"
  [[ -n "$__jg_value" ]] || return 1
  [[ "$3" == *"${__jg_value:0:1}"* ]] || return 2
  REPLY="${__jg_value:1}"
}

json_str() { json_get "$1" "$2" s; }

# A whole number written as a JSON number (not a string): 2 for anything else that is there.
json_int() {
  local code=0
  json_get "$1" "$2" n || code=$?
  ((code == 0)) || return "$code"
  [[ "$REPLY" =~ ^[0-9]{1,15}$ ]] || return 2
}

# REPLY true or false.
json_bool() {
  json_get "$1" "$2" b
}

# 0 when perl can read JSON here (it is part of every Proxmox VE node).
json_reader_present() {
  perl -MJSON::PP -e 1 >/dev/null 2>&1
}

# ---------------------------------------------------------------------------------------------
# Versions (SemVer 2.0)

is_version() { [[ "$1" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ && ${#1} -le 64 ]]; }

# Compares the whole numbers $1 and $2 of any length: REPLY -1, 0 or 1.
compare_numbers() {
  local a="${1#"${1%%[!0]*}"}" b="${2#"${2%%[!0]*}"}"
  if ((${#a} != ${#b})); then
    REPLY=$((${#a} < ${#b} ? -1 : 1))
  elif [[ "$a" == "$b" ]]; then
    REPLY=0
  else
    # Digits of equal count: their order is the same in every locale.
    if [[ "$a" < "$b" ]]; then REPLY=-1; else REPLY=1; fi
  fi
}

# 0 when version $1 has lower precedence than $2 (SemVer 2.0, section 11): major, minor and patch
# as numbers; a pre-release below its release; pre-release identifiers one by one, numeric ones as
# numbers and below alphanumeric ones, those in ASCII order; a shorter set below a longer one that
# starts the same. Build metadata (+...) is ignored.
version_lt() {
  # A local REPLY: the caller's REPLY (often one of the versions compared) is left as it was.
  local a="${1%%+*}" b="${2%%+*}" pa='' pb='' i x y REPLY
  local -a na nb ia ib
  if [[ "$a" == *-* ]]; then pa="${a#*-}"; a="${a%%-*}"; fi
  if [[ "$b" == *-* ]]; then pb="${b#*-}"; b="${b%%-*}"; fi
  IFS=. read -r -a na <<<"$a"
  IFS=. read -r -a nb <<<"$b"
  for ((i = 0; i < 3; i++)); do
    compare_numbers "${na[i]:-0}" "${nb[i]:-0}"
    if ((REPLY != 0)); then ((REPLY < 0)); return; fi
  done
  [[ -n "$pa" ]] || return 1
  [[ -n "$pb" ]] || return 0
  IFS=. read -r -a ia <<<"$pa"
  IFS=. read -r -a ib <<<"$pb"
  for ((i = 0; i < ${#ia[@]} && i < ${#ib[@]}; i++)); do
    x="${ia[i]}" y="${ib[i]}"
    [[ "$x" != "$y" ]] || continue
    if [[ "$x" =~ ^[0-9]+$ && "$y" =~ ^[0-9]+$ ]]; then
      compare_numbers "$x" "$y"
      ((REPLY < 0))
      return
    fi
    if [[ "$x" =~ ^[0-9]+$ ]]; then return 0; fi
    if [[ "$y" =~ ^[0-9]+$ ]]; then return 1; fi
    compare_ascii "$x" "$y"
    return
  done
  ((${#ia[@]} < ${#ib[@]}))
}

# 0 when $1 sorts before $2 in ASCII order, whatever the locale's collation says (identifiers are
# ASCII letters, digits and hyphens).
compare_ascii() {
  local i x y
  for ((i = 0; i < ${#1} && i < ${#2}; i++)); do
    [[ "${1:i:1}" != "${2:i:1}" ]] || continue
    printf -v x '%d' "'${1:i:1}"
    printf -v y '%d' "'${2:i:1}"
    ((x < y))
    return
  done
  ((${#1} < ${#2}))
}

# ---------------------------------------------------------------------------------------------
# HTTP

# The pin curl takes (sha256//<base64>) from $1 given as sha256//<base64>, <base64>, SHA256:<base64>
# or 64 hex digits (colons allowed), into REPLY; 1 when it is none of these.
normalize_pin() {
  local fp="${1#sha256//}" hex escaped='' i
  fp="${fp#SHA256:}"
  if [[ "$fp" =~ ^[A-Za-z0-9+/]{43}=$ ]]; then
    REPLY="sha256//$fp"
  elif hex="${fp//:/}" && [[ "$hex" =~ ^[0-9A-Fa-f]{64}$ ]]; then
    for ((i = 0; i < 64; i += 2)); do escaped+="\\x${hex:i:2}"; done
    REPLY="sha256//$(printf '%b' "$escaped" | base64 -w0)"
  else
    return 1
  fi
}

HTTP_CODE=''
CURL_EXIT=0

# http METHOD PATH OUTFILE [BODYFILE] [TOKEN]: sets HTTP_CODE ('' when nothing came back) and
# CURL_EXIT. The token goes to curl through its config on stdin, never on the command line (where
# any local user could read it from /proc). With a pin, the certificate's public key must match it:
# -k only skips the CA check that a self-signed certificate cannot pass.
# shellcheck disable=SC2034 # CURL_EXIT is read by the scripts that include this file
http() {
  local method="$1" url="$SERVER_URL$2" out="$3" body="${4:-}" token="${5:-}" config='' code
  local -a args=(-sS -o "$out" -w '%{http_code}' -X "$method" --proto '=http,https'
    --connect-timeout "$CONNECT_TIMEOUT" --max-time "${HTTP_MAX_TIME:-$CURL_MAX_TIME}" --max-filesize "$MAX_DOWNLOAD_BYTES")
  if [[ -n "$TLS_PIN" ]]; then args+=(-k --pinnedpubkey "$TLS_PIN"); fi
  if [[ -n "$body" ]]; then args+=(-H 'Content-Type: application/json' --data-binary "@$body"); fi
  if [[ -n "$token" ]]; then config="header = \"Authorization: Bearer $token\""; fi
  HTTP_CODE=''
  CURL_EXIT=0
  code="$(curl "${args[@]}" -K - "$url" <<<"$config" 2>/dev/null)" || CURL_EXIT=$?
  [[ "$code" =~ ^[0-9]{3}$ && "$code" != 000 ]] || return 1
  HTTP_CODE="$code"
}

http_ok() { http "$@" && [[ "$HTTP_CODE" == 200 ]]; }

# ---------------------------------------------------------------------------------------------
# The signed release manifest and the agent files it names. Each check returns 1 with the reason
# in REPLY.

# Downloads manifest.json and manifest.sig (public files, trusted only once checked) into $1/.
manifest_download() {
  http_ok GET /api/agent/releases/manifest.json "$1/manifest.json" ||
    { REPLY="could not download the release manifest (${HTTP_CODE:-no answer})"; return 1; }
  http_ok GET /api/agent/releases/manifest.json.sig "$1/manifest.sig" ||
    { REPLY="could not download the release manifest's signature (${HTTP_CODE:-no answer})"; return 1; }
}

# The Ed25519 signature $1/manifest.sig of $1/manifest.json checked with the public key file $2.
manifest_signature_ok() {
  base64 -d <"$1/manifest.sig" >"$1/manifest.sig.bin" 2>/dev/null || { REPLY="the release manifest's signature is not base64"; return 1; }
  openssl pkeyutl -verify -pubin -inkey "$2" -rawin -in "$1/manifest.json" -sigfile "$1/manifest.sig.bin" >/dev/null 2>&1 ||
    { REPLY="the release manifest's signature does not verify with the controller's key"; return 1; }
}

# Parses $1/manifest.json into the array named $2 and checks that its issued_at (into
# MANIFEST_ISSUED, seconds) is not before $3, the newest issued_at this host has seen. A replayed old
# manifest is signed too: its expiry stops it once it has expired (manifest_unexpired), and until
# then the newest issued_at seen does (a replay could otherwise offer an older, vulnerable agent).
MANIFEST_ISSUED=0
manifest_read() {
  local seen="${3:-0}"
  { json_parse "$2" "$1/manifest.json" && json_get "$2" . o; } || { REPLY='the release manifest is not a JSON object'; return 1; }
  { json_str "$2" issued_at && MANIFEST_ISSUED="$(date -u -d "$REPLY" +%s 2>/dev/null)" && [[ "$MANIFEST_ISSUED" =~ ^[0-9]{1,12}$ ]]; } ||
    { REPLY='the release manifest has no valid issued_at'; return 1; }
  [[ "$seen" =~ ^[0-9]{1,12}$ ]] || seen=0
  if ((MANIFEST_ISSUED < seen)); then
    REPLY='the release manifest was issued before the newest one this host has seen: a replayed older manifest'
    return 1
  fi
}

# The parsed manifest $1 has not expired (a manifest without expires_at does not).
manifest_unexpired() {
  local expires code=0
  json_str "$1" expires_at || code=$?
  ((code != 1)) || return 0
  expires=0
  if ((code == 0)); then expires="$(date -u -d "$REPLY" +%s 2>/dev/null)" || expires=0; fi
  ((expires > $(date -u +%s))) || { REPLY='the release manifest has expired'; return 1; }
}

# 0 when version $1 has a pre-release part (`1.2.0-rc.1`; build metadata `+b7` is not one): the beta channel's.
is_prerelease() { local core="${1%%+*}"; [[ "$core" == *-* ]]; }

# The path (agents.N) of version $2's entry in the parsed manifest $1 into REPLY; with no $2, the
# newest stable version's (a new host follows the stable channel), or the newest pre-release's when
# no stable version ships. 1 when there is none.
manifest_entry() {
  local count=0 i entry='' version='' candidate
  json_get "$1" agents a && count="$REPLY"
  for ((i = 0; i < count; i++)); do
    { json_str "$1" "agents.$i.version" && is_version "$REPLY"; } || continue
    candidate="$REPLY"
    if [[ -n "${2:-}" ]]; then
      [[ "$candidate" == "$2" ]] || continue
    elif [[ -n "$version" ]]; then
      if is_prerelease "$candidate"; then
        { is_prerelease "$version" && version_lt "$version" "$candidate"; } || continue
      elif ! is_prerelease "$version"; then
        version_lt "$version" "$candidate" || continue
      fi
    fi
    version="$candidate"
    entry="agents.$i"
    [[ -z "${2:-}" ]] || break
  done
  [[ -n "$entry" ]] || return 1
  REPLY="$entry"
}

# The path on this server of the agent file of manifest entry $2 (version $3) in the parsed manifest
# $1, into REPLY: the entry's url when it is on this server, otherwise the fixed release path.
manifest_agent_path() {
  local fixed="/api/agent/releases/$3/host-agent.sh"
  if json_str "$1" "$2.url"; then
    if [[ "$REPLY" =~ ^/[A-Za-z0-9._/+-]+$ ]]; then
      return 0
    elif [[ "$REPLY" == "$SERVER_URL"/* && "${REPLY#"$SERVER_URL"}" =~ ^/[A-Za-z0-9._/+-]+$ ]]; then
      REPLY="${REPLY#"$SERVER_URL"}"
      return 0
    fi
  fi
  REPLY="$fixed"
}

# The downloaded agent file $1 checked against manifest entry $3 of the parsed manifest $2 for
# version $4: its size, its SHA-256, the version it declares, and that it is bash.
agent_file_ok() {
  local file="$1" sha size actual
  { json_str "$2" "$3.sha256" && [[ "$REPLY" =~ ^[0-9a-f]{64}$ ]]; } || { REPLY="the manifest has no sha256 for $4"; return 1; }
  sha="$REPLY"
  json_int "$2" "$3.size" || { REPLY="the manifest has no size for $4"; return 1; }
  size="$REPLY"
  actual="$(stat -c %s "$file")"
  [[ "$actual" == "$size" ]] || { REPLY="the agent file of $4 has $actual bytes, the signed manifest says $size"; return 1; }
  actual="$(sha256sum "$file")"
  [[ "${actual%% *}" == "$sha" ]] || { REPLY="SHA-256 of version $4 does not match the signed manifest"; return 1; }
  grep -q "^HOMEFLEET_AGENT_VERSION=\"$4\"\$" "$file" || { REPLY="the agent file does not declare version $4"; return 1; }
  bash -n "$file" 2>/dev/null || { REPLY="the agent file of $4 is not valid bash"; return 1; }
}
