package api

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
)

// Conditional requests: every successful GET of an object or a list under
// /v1 carries a strong ETag, a hash of the exact bytes of its answer and
// of what else decides who may see them (the account and its link, the
// mode, the key's usable scopes), so that the tag changes whenever the
// answer would, and also when only the scopes or the link changed; a
// request whose If-None-Match holds the current tag is answered 304 with
// no body. The tag is made from the answer itself, on whichever process
// answers: it can never be one made from another account's data, and a
// 404 stays a 404. A 304 is not billable (rental.Billable) and so not
// counted against the monthly quota; it was counted against the
// per-second limit before the handler ran.

// conditional tags a GET's 200 answer, and turns it into a 304 when the
// request already holds its tag.
func conditional(r *http.Request, resp response, cl *caller) response {
	if r.Method != http.MethodGet || resp.status != http.StatusOK || resp.stream != nil || resp.body == nil {
		return resp
	}
	tag := etag(cl, resp.body)
	resp.header.Set("ETag", tag)
	if !noneMatch(r.Header.Values("If-None-Match"), tag) {
		return resp
	}
	resp.release()
	resp.status, resp.body, resp.buf = http.StatusNotModified, nil, nil
	resp.header.Del("Content-Type")
	return resp
}

// etag is the strong tag of body as cl sees it: 22 characters of base64
// (128 bits of SHA-256, which the machine's SHA instructions make cheaper
// than the answer's own encoding), quoted.
func etag(cl *caller, body []byte) string {
	h := sha256.New()
	var ctx strings.Builder
	ctx.WriteString(string(cl.mode))
	if a := cl.account; a != nil {
		ctx.WriteString("\x00" + a.ID + "\x00" + strconv.FormatInt(a.UpdatedAt.UnixNano(), 10))
	}
	for _, s := range cl.scopes {
		ctx.WriteString("\x00" + string(s))
	}
	ctx.WriteString("\x01")
	h.Write([]byte(ctx.String()))
	h.Write(body)
	sum := h.Sum(nil)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
}

// noneMatch reports whether If-None-Match (its header values) names tag
// or is "*". Weak tags compare by their opaque part, as RFC 9110's weak
// comparison for If-None-Match says.
func noneMatch(values []string, tag string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" || t == tag {
				return true
			}
		}
	}
	return false
}
