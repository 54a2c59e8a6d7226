expected=$(printf '%s.' "$TS" | cat - body.json | openssl dgst -sha256 -hmac "$WHSEC" -hex | sed 's/^.*= //')
[ $(( $(date +%s) - TS )) -le 300 ] || { echo "stale timestamp"; exit 1; }
case ",$SIG," in *",sha256=$expected,"*) echo verified ;; *) echo "bad signature"; exit 1 ;; esac
