# shellcheck shell=bash
# homefleet shell helper: writing JSON. Pure bash (no perl): the usage reporter sources it inside
# guests, where perl may lack JSON::PP. The host agent and its installer carry it inlined (the
# controller replaces their include line with this file when it serves them).

# JSON string literal (with quotes) of $1 into the variable named by $2. Control characters become
# escapes; everything else (UTF-8 included) is kept as it is.
json_string() {
  # Prefixed locals: the caller's variable named by $2 must not be shadowed by one of ours.
  local __js_s="${1-}" __js_bs=$'\\' __js_q='"' __js_i __js_h __js_c __js_e
  __js_s="${__js_s//"$__js_bs"/"$__js_bs$__js_bs"}"
  __js_s="${__js_s//"$__js_q"/"$__js_bs$__js_q"}"
  __js_s="${__js_s//$'\n'/"${__js_bs}n"}"
  __js_s="${__js_s//$'\r'/"${__js_bs}r"}"
  __js_s="${__js_s//$'\t'/"${__js_bs}t"}"
  for ((__js_i = 1; __js_i < 32; __js_i++)); do
    printf -v __js_h '%02x' "$__js_i"
    printf -v __js_c '%b' "\\x$__js_h"
    if [[ "$__js_s" == *"$__js_c"* ]]; then
      printf -v __js_e '\\u%04x' "$__js_i"
      __js_s="${__js_s//"$__js_c"/"$__js_e"}"
    fi
  done
  printf -v "$2" '%s' "\"$__js_s\""
}
