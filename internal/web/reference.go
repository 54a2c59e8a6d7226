package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"rentapi/internal/api"
)

// reference is the API reference (/docs), read from the embedded OpenAPI
// document when the pages start, so that it says what the contract says:
// every operation, grouped by tag, with what it takes and answers.
type reference struct {
	Title, Version string
	Intro          template.HTML
	Tags           []refTag
}

// refTag is a group of operations, as the document's tags list them: a
// resource, whose page is /docs/api/<Slug>.
type refTag struct {
	Name, Anchor, Slug string
	Description        template.HTML
	Ops                []refOp
}

// Page is the resource's page.
func (t refTag) Page() string { return "/docs/api/" + t.Slug }

// refOp is one operation; its anchor is its operationId.
type refOp struct {
	ID, Method, Path, Summary string
	Description               template.HTML
	// Scope is x-required-scope; NoKey is an operation without security.
	Scope     string
	NoKey     bool
	Params    []refField
	Body      *refBody
	Responses []refResponse
	// Samples are the call in curl and with each SDK.
	Samples []codeSample
	// Page is the operation's place: its resource's page and its anchor.
	Page string
}

// codeSample is an operation's call in one language.
type codeSample struct{ Lang, Code string }

// refField is a parameter or a body field, with its type and limits.
type refField struct {
	Name, In, Type string
	Required       bool
	Limits         string
	Description    template.HTML
}

// refBody is an operation's request body.
type refBody struct {
	Description template.HTML
	Fields      []refField
	Examples    []refExample
}

// refResponse is one status an operation answers with.
type refResponse struct {
	Status      string
	Description template.HTML
	Examples    []refExample
}

// refExample is an example body as indented JSON.
type refExample struct{ Title, JSON string }

// openapi walks the document's YAML tree, following $refs into its
// components.
type openapi struct {
	root *yaml.Node
	// errorCodes are the codes the error page explains: a code in a
	// description links to its section.
	errorCodes map[string]bool
}

// newReference reads the reference from an OpenAPI document.
func newReference(doc []byte) (*reference, error) {
	var file yaml.Node
	if err := yaml.Unmarshal(doc, &file); err != nil || len(file.Content) == 0 {
		return nil, fmt.Errorf("web: the OpenAPI document does not parse: %v", err)
	}
	o := &openapi{root: file.Content[0], errorCodes: map[string]bool{}}
	for _, c := range api.ErrorCodes() {
		o.errorCodes[c.Code] = true
	}
	info := get(o.root, "info")
	ref := &reference{Title: str(info, "title"), Version: str(info, "version"), Intro: o.markdown(str(info, "description"))}
	byTag := map[string]int{}
	if tags := get(o.root, "tags"); tags != nil {
		for _, t := range tags.Content {
			byTag[str(t, "name")] = len(ref.Tags)
			ref.Tags = append(ref.Tags, refTag{Name: str(t, "name"), Anchor: "tag-" + slug(str(t, "name")), Slug: slug(str(t, "name")), Description: o.markdown(str(t, "description"))})
		}
	}
	paths := get(o.root, "paths")
	if paths == nil {
		return nil, fmt.Errorf("web: the OpenAPI document has no paths")
	}
	for i := 0; i+1 < len(paths.Content); i += 2 {
		path, item := paths.Content[i].Value, paths.Content[i+1]
		for j := 0; j+1 < len(item.Content); j += 2 {
			method := item.Content[j].Value
			switch method {
			case "get", "post", "put", "patch", "delete", "head", "options":
			default:
				continue
			}
			op, err := o.operation(path, method, item, item.Content[j+1])
			if err != nil {
				return nil, err
			}
			tag := ""
			if t := get(item.Content[j+1], "tags"); t != nil && len(t.Content) > 0 {
				tag = t.Content[0].Value
			}
			k, ok := byTag[tag]
			if !ok {
				k = len(ref.Tags)
				byTag[tag] = k
				ref.Tags = append(ref.Tags, refTag{Name: tag, Anchor: "tag-" + slug(tag), Slug: slug(tag)})
			}
			op.Page = ref.Tags[k].Page() + "#" + op.ID
			ref.Tags[k].Ops = append(ref.Tags[k].Ops, op)
		}
	}
	return ref, nil
}

// operation reads one operation of a path item.
func (o *openapi) operation(path, method string, item, n *yaml.Node) (refOp, error) {
	op := refOp{ID: str(n, "operationId"), Method: strings.ToUpper(method), Path: path, Summary: str(n, "summary"),
		Description: o.markdown(str(n, "description")), Scope: str(n, "x-required-scope")}
	if op.ID == "" {
		return op, fmt.Errorf("web: %s %s has no operationId", op.Method, path)
	}
	if sec := get(n, "security"); sec != nil && len(sec.Content) == 0 {
		op.NoKey = true
	}
	for _, list := range []*yaml.Node{get(item, "parameters"), get(n, "parameters")} {
		if list == nil {
			continue
		}
		for _, p := range list.Content {
			p = o.deref(p)
			schema := o.deref(get(p, "schema"))
			op.Params = append(op.Params, refField{Name: str(p, "name"), In: str(p, "in"), Required: str(p, "required") == "true",
				Type: o.typeName(schema), Limits: limits(schema), Description: o.markdown(str(p, "description"))})
		}
	}
	if rb := o.deref(get(n, "requestBody")); rb != nil {
		body := &refBody{Description: o.markdown(str(rb, "description"))}
		media := get(get(rb, "content"), "application/json")
		schema := o.deref(get(media, "schema"))
		body.Fields = o.fields("", schema, 0)
		examples, err := o.examples(media)
		if err != nil {
			return op, fmt.Errorf("web: %s: %w", op.ID, err)
		}
		body.Examples = examples
		op.Body = body
	}
	if responses := get(n, "responses"); responses != nil {
		for i := 0; i+1 < len(responses.Content); i += 2 {
			status, r := responses.Content[i].Value, o.deref(responses.Content[i+1])
			resp := refResponse{Status: status, Description: o.markdown(str(r, "description"))}
			if strings.HasPrefix(status, "2") {
				for _, media := range mapValues(get(r, "content")) {
					examples, err := o.examples(media)
					if err != nil {
						return op, fmt.Errorf("web: %s %s: %w", op.ID, status, err)
					}
					resp.Examples = append(resp.Examples, examples...)
				}
			}
			op.Responses = append(op.Responses, resp)
		}
	}
	op.Samples = o.samples(op, n)
	return op, nil
}

// fields lists an object schema's properties, those of nested objects as
// parent.child, a few levels deep.
func (o *openapi) fields(prefix string, schema *yaml.Node, depth int) []refField {
	props := get(schema, "properties")
	if props == nil || depth > 3 {
		return nil
	}
	required := map[string]bool{}
	if r := get(schema, "required"); r != nil {
		for _, c := range r.Content {
			required[c.Value] = true
		}
	}
	var out []refField
	for i := 0; i+1 < len(props.Content); i += 2 {
		name, p := props.Content[i].Value, o.deref(props.Content[i+1])
		out = append(out, refField{Name: prefix + name, Required: required[name], Type: o.typeName(p), Limits: limits(p),
			Description: o.markdown(str(p, "description"))})
		switch {
		case get(p, "properties") != nil:
			out = append(out, o.fields(prefix+name+".", p, depth+1)...)
		case get(p, "oneOf") != nil: // an object or null
			for _, alt := range get(p, "oneOf").Content {
				out = append(out, o.fields(prefix+name+".", o.deref(alt), depth+1)...)
			}
		case get(p, "items") != nil:
			out = append(out, o.fields(prefix+name+"[].", o.deref(get(p, "items")), depth+1)...)
		}
	}
	return out
}

// examples are a media type's example or named examples, as indented JSON.
func (o *openapi) examples(media *yaml.Node) ([]refExample, error) {
	var out []refExample
	add := func(title string, v *yaml.Node) error {
		var buf bytes.Buffer
		if err := api.WriteJSON(&buf, v); err != nil {
			return err
		}
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, buf.Bytes(), "", "  "); err != nil {
			return err
		}
		out = append(out, refExample{Title: title, JSON: pretty.String()})
		return nil
	}
	if ex := get(media, "example"); ex != nil {
		if err := add("", ex); err != nil {
			return nil, err
		}
	}
	if exs := get(media, "examples"); exs != nil {
		for i := 0; i+1 < len(exs.Content); i += 2 {
			ex := o.deref(exs.Content[i+1])
			title := str(ex, "summary")
			if title == "" {
				title = exs.Content[i].Value
			}
			if v := get(ex, "value"); v != nil {
				if err := add(title, v); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// typeName is a schema's type as a reader wants it: "integer",
// "string or null", "array of string", "one of: desc, asc".
func (o *openapi) typeName(s *yaml.Node) string {
	if s == nil {
		return ""
	}
	var types []string
	if t := get(s, "type"); t != nil {
		if t.Kind == yaml.SequenceNode {
			for _, c := range t.Content {
				types = append(types, c.Value)
			}
		} else {
			types = []string{t.Value}
		}
	}
	for i, t := range types {
		if t == "array" {
			types[i] = "array of " + o.typeName(o.deref(get(s, "items")))
		}
	}
	name := strings.Join(types, " or ")
	if f := str(s, "format"); f != "" && f != "int32" && f != "int64" {
		name += " (" + f + ")"
	}
	if name == "" {
		for _, alt := range []string{"oneOf", "anyOf", "allOf"} {
			if list := get(s, alt); list != nil {
				var names []string
				for _, c := range list.Content {
					names = append(names, o.typeName(o.deref(c)))
				}
				return strings.Join(names, " or ")
			}
		}
	}
	return name
}

// limits are a schema's enum, bounds and default, briefly.
func limits(s *yaml.Node) string {
	if s == nil {
		return ""
	}
	var parts []string
	if e := get(s, "enum"); e != nil {
		var vals []string
		for _, c := range e.Content {
			vals = append(vals, c.Value)
		}
		parts = append(parts, "one of "+strings.Join(vals, ", "))
	}
	lo, hi := str(s, "minimum"), str(s, "maximum")
	switch {
	case lo != "" && hi != "":
		parts = append(parts, lo+" to "+hi)
	case lo != "":
		parts = append(parts, "at least "+lo)
	case hi != "":
		parts = append(parts, "at most "+hi)
	}
	if n := str(s, "maxLength"); n != "" {
		parts = append(parts, "up to "+n+" characters")
	}
	if n := str(s, "maxItems"); n != "" {
		parts = append(parts, "up to "+n+" items")
	}
	if d := get(s, "default"); d != nil && d.Kind == yaml.ScalarNode {
		v := d.Value
		if d.Tag == "!!str" {
			v = strconv.Quote(v)
		}
		parts = append(parts, "default "+v)
	}
	return strings.Join(parts, "; ")
}

// deref follows a node's $ref within the document (#/components/...).
func (o *openapi) deref(n *yaml.Node) *yaml.Node {
	for range 10 {
		ref := str(n, "$ref")
		if !strings.HasPrefix(ref, "#/") {
			return n
		}
		target := o.root
		for _, part := range strings.Split(ref[2:], "/") {
			target = get(target, strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~"))
		}
		if target == nil {
			return n
		}
		n = target
	}
	return n
}

// get is the value of key in a mapping node, or nil.
func get(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// str is the scalar value of key in a mapping node, or "".
func str(n *yaml.Node, key string) string {
	if v := get(n, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// mapValues are the values of a mapping node, in order.
func mapValues(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var out []*yaml.Node
	for i := 1; i < len(n.Content); i += 2 {
		out = append(out, n.Content[i])
	}
	return out
}

// slug makes an anchor of a name: lowercase words joined by "-".
func slug(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), "-")
}

var (
	paragraphs = regexp.MustCompile(`\n[ \t]*\n`)
	inline     = regexp.MustCompile("\\*\\*([^*]+)\\*\\*|`([^`]+)`")
)

// markdown renders the little Markdown the document's descriptions use:
// paragraphs, **strong** and `code`; a code span that is an error code
// links to its section of the error page. Everything else is escaped.
func (o *openapi) markdown(s string) template.HTML {
	return renderMarkdown(s, o.errorCodes)
}

// renderMarkdown is markdown with the set of error codes to link.
func renderMarkdown(s string, codes map[string]bool) template.HTML {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	var b strings.Builder
	for _, para := range paragraphs.Split(s, -1) {
		b.WriteString("<p>")
		writeInline(&b, strings.Join(strings.Fields(para), " "), codes)
		b.WriteString("</p>")
	}
	return template.HTML(b.String())
}

// writeInline writes one run of text with its **strong** and `code` spans;
// a code span that is an error code links to its section of the error
// page. Everything else is escaped.
func writeInline(b *strings.Builder, text string, codes map[string]bool) {
	last := 0
	for _, m := range inline.FindAllStringSubmatchIndex(text, -1) {
		b.WriteString(template.HTMLEscapeString(text[last:m[0]]))
		if m[2] >= 0 {
			b.WriteString("<strong>" + template.HTMLEscapeString(text[m[2]:m[3]]) + "</strong>")
		} else {
			code := text[m[4]:m[5]]
			if codes[code] {
				b.WriteString(`<a href="` + api.ErrorDocsPath + "#" + code + `"><code>` + template.HTMLEscapeString(code) + "</code></a>")
			} else {
				b.WriteString("<code>" + template.HTMLEscapeString(code) + "</code>")
			}
		}
		last = m[1]
	}
	b.WriteString(template.HTMLEscapeString(text[last:]))
}
