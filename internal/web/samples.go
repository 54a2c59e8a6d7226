package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// samples writes an operation's call in curl, with the Go SDK (sdk/go) and
// with the TypeScript SDK (sdk/typescript): the path's parameters as
// variables of the caller's, the body the document's first example. The
// SDKs' names are the document's (sdk/gen): a method per operationId, the
// body's type its schema's name.
func (o *openapi) samples(op refOp, n *yaml.Node) []codeSample {
	var body string
	if op.Body != nil && len(op.Body.Examples) > 0 {
		body = op.Body.Examples[0].JSON
	}
	vars := pathVars.FindAllStringSubmatch(op.Path, -1)
	curl := []string{fmt.Sprintf(`curl -sS -X %s "$BASE%s"`, op.Method, pathVars.ReplaceAllStringFunc(op.Path, func(v string) string {
		return "$" + strings.ToUpper(strings.Trim(v, "{}"))
	}))}
	if op.ID == "streamEvents" {
		curl[0] = `curl -sS -N "$BASE` + op.Path + `"`
	}
	if !op.NoKey {
		curl = append(curl, `-H "Authorization: Bearer $KEY"`)
	}
	if body != "" {
		var compact bytes.Buffer
		json.Compact(&compact, []byte(body))
		curl = append(curl, `-H 'Content-Type: application/json'`)
		body = compact.String()
	}
	if op.Method != "GET" && !op.NoKey {
		curl = append(curl, `-H 'Idempotency-Key: a-key-of-yours'`)
	}
	if body != "" {
		curl = append(curl, `-d '`+strings.ReplaceAll(body, `'`, `'\''`)+`'`)
	}
	out := []codeSample{{"curl", strings.Join(curl, " \\\n  ")}}
	if op.NoKey || op.ID == "streamEvents" {
		return out
	}

	// The SDKs' calls.
	var goArgs, tsArgs []string
	goArgs = append(goArgs, "ctx")
	for _, v := range vars {
		goArgs = append(goArgs, goIdent(v[1], false))
		tsArgs = append(tsArgs, tsIdent(v[1]))
	}
	method := goIdent(op.ID, true)
	list := strings.HasPrefix(op.ID, "list")
	hasQuery := slices.ContainsFunc(op.Params, func(f refField) bool { return f.In == "query" })
	var goPre string
	switch {
	case body != "":
		typ := bodyType(o, n)
		goPre = fmt.Sprintf("var params rentapi.%s\nif err := json.Unmarshal([]byte(`%s`), &params); err != nil {\n\treturn err\n}\n", typ, op.Body.Examples[0].JSON)
		goArgs = append(goArgs, "&params")
		tsArgs = append(tsArgs, op.Body.Examples[0].JSON)
	case list && hasQuery:
		goArgs = append(goArgs, "&rentapi."+method+"Params{Limit: 20}")
		tsArgs = append(tsArgs, "{ limit: 20 }")
	case hasQuery:
		goArgs = append(goArgs, "nil")
	}
	call := fmt.Sprintf("c.%s(%s)", method, strings.Join(goArgs, ", "))
	tsCall := fmt.Sprintf("client.%s(%s)", op.ID, strings.Join(tsArgs, ", "))
	var goCode, tsCode string
	switch {
	case list:
		goCode = fmt.Sprintf("for item, err := range %s {\n\tif err != nil {\n\t\treturn err\n\t}\n\tfmt.Println(item.ID)\n}", call)
		tsCode = fmt.Sprintf("for await (const item of %s) {\n  console.log(item.id);\n}", tsCall)
	case noContent(n):
		goCode = fmt.Sprintf("if err := %s; err != nil {\n\treturn err\n}", call)
		tsCode = "await " + tsCall + ";"
	default:
		goCode = fmt.Sprintf("res, err := %s\nif err != nil {\n\treturn err\n}", call)
		tsCode = "const res = await " + tsCall + ";"
	}
	return append(out, codeSample{"Go", goPre + goCode}, codeSample{"TypeScript", tsCode})
}

var pathVars = regexp.MustCompile(`\{([a-z_]+)\}`)

// bodyType is the name of an operation's request body schema, which the
// Go SDK's type of it takes.
func bodyType(o *openapi, n *yaml.Node) string {
	rb := o.deref(get(n, "requestBody"))
	s := get(get(get(rb, "content"), "application/json"), "schema")
	if ref := str(s, "$ref"); ref != "" {
		return goIdent(ref[strings.LastIndexByte(ref, '/')+1:], true)
	}
	return goIdent(str(n, "operationId"), true) + "Params"
}

// noContent says an operation answers 204 alone.
func noContent(n *yaml.Node) bool {
	r := get(n, "responses")
	return get(r, "204") != nil && get(r, "200") == nil && get(r, "201") == nil && get(r, "202") == nil
}

// goIdent is a Go name as sdk/gen makes them: bill_id is billID (BillID
// exported), listBills is ListBills.
func goIdent(s string, export bool) string {
	var b strings.Builder
	for i, w := range identWords(s) {
		switch {
		case strings.EqualFold(w, "id"), strings.EqualFold(w, "url"), strings.EqualFold(w, "qr"), strings.EqualFold(w, "api"):
			if i == 0 && !export {
				b.WriteString(strings.ToLower(w))
			} else {
				b.WriteString(strings.ToUpper(w))
			}
		case i == 0 && !export:
			b.WriteString(strings.ToLower(w[:1]) + w[1:])
		default:
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// tsIdent is a TypeScript variable for a path parameter: bill_id is billId.
func tsIdent(s string) string {
	var b strings.Builder
	for i, w := range identWords(s) {
		if i == 0 {
			b.WriteString(strings.ToLower(w))
		} else {
			b.WriteString(strings.ToUpper(w[:1]) + strings.ToLower(w[1:]))
		}
	}
	return b.String()
}

// identWords splits snake_case and camelCase.
func identWords(s string) []string {
	var out []string
	var cur []rune
	r := []rune(s)
	for i, c := range r {
		switch {
		case c == '_' || c == '-' || c == '.':
			if len(cur) > 0 {
				out, cur = append(out, string(cur)), nil
			}
			continue
		case unicode.IsUpper(c) && i > 0 && unicode.IsLower(r[i-1]) && len(cur) > 0:
			out, cur = append(out, string(cur)), nil
		}
		cur = append(cur, c)
	}
	if len(cur) > 0 {
		out = append(out, string(cur))
	}
	return out
}
