package api

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Conditional requests: every successful GET of an object or a list under
// /v1 carries a strong ETag, and a request whose If-None-Match holds the
// current tag is answered 304 with no body. A 304 is not billable
// (rental.Billable) and so not counted against the monthly quota; it was
// counted against the per-second limit before the handler ran.
//
// A read made from a landlord's data alone (most of them: see
// operation.fresh) is tagged by the landlord's data version, which every
// write of that data moves on in its own transaction (store.DataVersion),
// with what else decides the answer: the caller (mode, account and its
// link, application, usable scopes), the build that renders it, and the
// request's path and query. The tag is known before the answer is made, so
// If-None-Match with it is answered from one small read, on any process;
// it changes whenever the answer could, and sometimes when it would not (a
// write elsewhere in the landlord's data): a 200 then, never a stale 304.
// The version is read before the answer's own reads, so an answer is never
// tagged newer than it is. Other reads (the account, the sandbox's clock,
// the application's webhook endpoints, whose answers change without a
// landlord's write) are tagged by a hash of their exact bytes, as every
// read once was. A 404 stays a 404: If-None-Match: * is judged on the
// made answer.

// read runs a GET: answered 304 from its version tag when the request
// holds it, else with the answer kept under that tag (see answers), else
// made, tagged and (with a matching If-None-Match: *, or the hash of a
// read not versioned) possibly turned into a 304.
func (s *Server) read(c *call, op *operation) response {
	tag := ""
	if op.versioned(c.r) && c.caller.account != nil {
		// A failed read of the version is met again by the answer's own
		// reads, which say what it was (a key's kept lookup out of date
		// among others).
		if v, err := c.key.DataVersion(c.ctx, c.q, c.caller.account.LandlordID); err == nil {
			tag = s.versionTag(c.caller, c.r, v)
			if noneMatch(c.r.Header.Values("If-None-Match"), tag, false) {
				return notModified(response{}, tag)
			}
			if resp, ok := s.kept.get(tag); ok {
				return conditional(c.r, resp, c.caller, tag)
			}
		}
	}
	resp, _ := s.run(c, op.h)
	if tag != "" && resp.status == http.StatusOK && resp.stream == nil && resp.body != nil {
		s.kept.put(tag, resp)
	}
	return conditional(c.r, resp, c.caller, tag)
}

// conditional tags a GET's 200 answer with tag (by its bytes when tag is
// empty), and turns it into a 304 when the request already holds the tag.
func conditional(r *http.Request, resp response, cl *caller, tag string) response {
	if r.Method != http.MethodGet || resp.status != http.StatusOK || resp.stream != nil || resp.body == nil {
		return resp
	}
	if tag == "" {
		tag = tagOf(cl, resp.body)
	}
	resp.etag = tag
	if !noneMatch(r.Header.Values("If-None-Match"), tag, true) {
		return resp
	}
	resp.release()
	resp.body, resp.buf = nil, nil
	resp.json = false
	resp.header.Del("Content-Type")
	return notModified(resp, tag)
}

// notModified is resp as a 304 with tag.
func notModified(resp response, tag string) response {
	resp.status = http.StatusNotModified
	resp.etag = tag
	return resp
}

// versionTag is the strong tag of the answer cl gets for r's path and
// query at the landlord's data version v (see read), from this build and
// its configuration (a tenant's chat link is made from the LINE account's
// add-friend URL).
func (s *Server) versionTag(cl *caller, r *http.Request, v string) string {
	var buf [512]byte
	b := append(buf[:0], "version\x00"...)
	b = append(b, build()...)
	b = append(b, 0)
	b = append(b, s.db.AddFriendURL()...)
	b = append(b, 0)
	b = append(b, r.URL.EscapedPath()...)
	b = append(b, '?')
	b = append(b, r.URL.RawQuery...)
	b = append(b, 0)
	b = append(b, v...)
	if cl.key != nil {
		b = append(b, 0)
		b = append(b, cl.key.App.ID...)
	}
	return tagOf(cl, b)
}

// build names the build that renders the answers, so that a tag made by
// one version of the service is not taken by another: a digest of the
// running executable (a build records its commit only when made in a
// clean checkout), or, if it cannot be read, a random name for this
// process.
var build = sync.OnceValue(func() string {
	var sum [sha256.Size]byte
	if exe, err := os.Executable(); err == nil {
		if f, err := os.Open(exe); err == nil {
			h := sha256.New()
			if _, err := io.Copy(h, f); err == nil {
				h.Sum(sum[:0])
			}
			f.Close()
		}
	}
	if sum == [sha256.Size]byte{} {
		rand.Read(sum[:])
	}
	return base64.RawURLEncoding.EncodeToString(sum[:12])
})

// tagOf is the strong tag of what as cl sees it: 22 characters of base64
// (128 bits of SHA-256, which the machine's SHA instructions make cheaper
// than the answer's own encoding), quoted.
func tagOf(cl *caller, what []byte) string {
	var buf [1024]byte
	b := append(buf[:0], cl.mode...)
	if a := cl.account; a != nil {
		b = append(b, 0)
		b = append(b, a.ID...)
		b = append(b, 0)
		b = strconv.AppendInt(b, a.UpdatedAt.UnixNano(), 10)
	}
	for _, s := range cl.scopes {
		b = append(b, 0)
		b = append(b, s...)
	}
	b = append(b, 1)
	var sum [sha256.Size]byte
	if len(b)+len(what) <= cap(buf) {
		// A version's tag: the digest of a short text, made on the stack.
		sum = sha256.Sum256(append(b, what...))
	} else {
		h := sha256.New()
		h.Write(b)
		h.Write(what)
		h.Sum(sum[:0])
	}
	var tag [24]byte
	tag[0], tag[23] = '"', '"'
	base64.RawURLEncoding.Encode(tag[1:23], sum[:16])
	return string(tag[:])
}

// noneMatch reports whether If-None-Match (its header values) names tag,
// or, when any says so, is "*" (which only a made answer can match: a 404
// stays a 404). Weak tags compare by their opaque part, as RFC 9110's weak
// comparison for If-None-Match says.
func noneMatch(values []string, tag string, any bool) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == "*" && any || t == tag {
				return true
			}
		}
	}
	return false
}
