package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// doc is the part of the OpenAPI document the SDKs are made from, with
// mappings kept in the document's order so the output reads as it does.
type doc struct {
	Paths      ordered[*pathItem] `yaml:"paths"`
	Components struct {
		Schemas       ordered[*schema]  `yaml:"schemas"`
		Parameters    map[string]*param `yaml:"parameters"`
		RequestBodies map[string]*body  `yaml:"requestBodies"`
		Responses     map[string]*body  `yaml:"responses"`
	} `yaml:"components"`
}

// ordered is a YAML mapping read in its order.
type ordered[T any] struct {
	Keys   []string
	Values map[string]T
}

// UnmarshalYAML reads a mapping, keeping its keys' order.
func (o *ordered[T]) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping", n.Line)
	}
	o.Values = map[string]T{}
	for i := 0; i < len(n.Content); i += 2 {
		var v T
		if err := n.Content[i+1].Decode(&v); err != nil {
			return err
		}
		k := n.Content[i].Value
		o.Keys = append(o.Keys, k)
		o.Values[k] = v
	}
	return nil
}

// schema is a JSON Schema as the document writes them.
type schema struct {
	Ref                  string           `yaml:"$ref"`
	Type                 types            `yaml:"type"`
	Format               string           `yaml:"format"`
	Description          string           `yaml:"description"`
	Enum                 []string         `yaml:"enum"`
	Const                any              `yaml:"const"`
	Properties           ordered[*schema] `yaml:"properties"`
	Required             []string         `yaml:"required"`
	Items                *schema          `yaml:"items"`
	OneOf                []*schema        `yaml:"oneOf"`
	AdditionalProperties any              `yaml:"additionalProperties"`
}

// types is a schema's type: one name, or a list such as [string, null].
type types []string

// UnmarshalYAML reads a type written alone or as a list.
func (t *types) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*t = types{n.Value}
		return nil
	}
	var l []string
	if err := n.Decode(&l); err != nil {
		return err
	}
	*t = l
	return nil
}

// nullable says whether null is among the types, and returns the other.
func (t types) nullable() (string, bool) {
	var base string
	null := false
	for _, n := range t {
		if n == "null" {
			null = true
		} else {
			base = n
		}
	}
	return base, null
}

func (s *schema) required(name string) bool {
	for _, r := range s.Required {
		if r == name {
			return true
		}
	}
	return false
}

type param struct {
	Ref         string  `yaml:"$ref"`
	Name        string  `yaml:"name"`
	In          string  `yaml:"in"`
	Required    bool    `yaml:"required"`
	Description string  `yaml:"description"`
	Schema      *schema `yaml:"schema"`
}

// body is a request body or a response, by reference or written in place.
type body struct {
	Ref     string `yaml:"$ref"`
	Content map[string]struct {
		Schema *schema `yaml:"schema"`
	} `yaml:"content"`
}

// pathItem is a path's operations, and the parameters all of them take.
type pathItem struct {
	Get        *operation `yaml:"get"`
	Post       *operation `yaml:"post"`
	Put        *operation `yaml:"put"`
	Patch      *operation `yaml:"patch"`
	Delete     *operation `yaml:"delete"`
	Parameters []*param   `yaml:"parameters"`
}

// operations are the path's operations by method, in the order written
// here, each with the path's parameters first.
func (p *pathItem) operations() [][2]any {
	var out [][2]any
	for _, m := range []struct {
		verb string
		op   *operation
	}{{"GET", p.Get}, {"POST", p.Post}, {"PUT", p.Put}, {"PATCH", p.Patch}, {"DELETE", p.Delete}} {
		if m.op != nil {
			m.op.Parameters = append(append([]*param(nil), p.Parameters...), m.op.Parameters...)
			out = append(out, [2]any{m.verb, m.op})
		}
	}
	return out
}

type operation struct {
	OperationID string           `yaml:"operationId"`
	Summary     string           `yaml:"summary"`
	Description string           `yaml:"description"`
	Security    []map[string]any `yaml:"security"`
	Scope       string           `yaml:"x-required-scope"`
	Parameters  []*param         `yaml:"parameters"`
	RequestBody *body            `yaml:"requestBody"`
	Responses   map[string]*body `yaml:"responses"`
}

// refName is the last part of a "#/components/…/Name" reference.
func refName(ref string) string { return ref[strings.LastIndexByte(ref, '/')+1:] }

func (d *doc) param(p *param) *param {
	if p.Ref != "" {
		return d.Components.Parameters[refName(p.Ref)]
	}
	return p
}

func (d *doc) requestBody(b *body) *body {
	if b != nil && b.Ref != "" {
		return d.Components.RequestBodies[refName(b.Ref)]
	}
	return b
}

func (d *doc) response(b *body) *body {
	if b != nil && b.Ref != "" {
		return d.Components.Responses[refName(b.Ref)]
	}
	return b
}

// jsonSchema is a body's application/json schema, nil when it has none.
func (b *body) jsonSchema() *schema {
	if b == nil {
		return nil
	}
	c, ok := b.Content["application/json"]
	if !ok {
		return nil
	}
	return c.Schema
}

// component is the schema a reference names.
func (d *doc) component(ref string) *schema { return d.Components.Schemas.Values[refName(ref)] }

// call is an operation as an SDK's method sees it, read once for every
// SDK: its name, its path's parameters in order, its query parameters,
// its body, and what its answer holds.
type call struct {
	ID, Verb, Path       string
	Summary, Description string
	// PathParams are the path's {names} in order; Query its query
	// parameters.
	PathParams []string
	Query      []*param
	// Body is the JSON request body's schema, nil for none.
	Body *schema
	// Data is the answer's data (for a list, the schema of its items);
	// nil for an answer of 204 alone. List says the answer is a page;
	// MaybeEmpty that it may also be 204.
	Data       *schema
	List       bool
	MaybeEmpty bool
}

var pathParam = regexp.MustCompile(`\{([a-z_]+)\}`)

// calls are the operations the SDKs make methods of, in the document's
// order: every operation that takes a key and answers JSON (not health,
// the document itself or the event stream).
func (d *doc) calls() ([]call, error) {
	var out []call
	for _, path := range d.Paths.Keys {
		for _, m := range d.Paths.Values[path].operations() {
			verb, op := m[0].(string), m[1].(*operation)
			if len(op.Security) == 0 || op.OperationID == "streamEvents" {
				continue
			}
			c, err := d.call(verb, path, op)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", verb, path, err)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

func (d *doc) call(verb, path string, op *operation) (call, error) {
	c := call{ID: op.OperationID, Verb: verb, Path: path, Summary: op.Summary, Description: op.Description}
	for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
		c.PathParams = append(c.PathParams, m[1])
	}
	for _, p := range op.Parameters {
		if p := d.param(p); p.In == "query" {
			c.Query = append(c.Query, p)
		}
	}
	if op.RequestBody != nil {
		if c.Body = d.requestBody(op.RequestBody).jsonSchema(); c.Body == nil {
			return c, fmt.Errorf("a request body other than JSON")
		}
	}
	var code string
	for _, s := range []string{"200", "201", "202", "204"} {
		if op.Responses[s] != nil {
			code = s
			break
		}
	}
	switch code {
	case "":
		return c, fmt.Errorf("no success response")
	case "204":
		return c, nil
	}
	c.MaybeEmpty = op.Responses["204"] != nil
	s := d.response(op.Responses[code]).jsonSchema()
	if s == nil || s.Ref == "" {
		return c, fmt.Errorf("the %s answer is not a schema of the components", code)
	}
	env := d.component(s.Ref)
	if c.Data = env.Properties.Values["data"]; c.Data == nil {
		return c, fmt.Errorf("the %s answer has no data", code)
	}
	if env.Properties.Values["pagination"] != nil {
		c.Data, c.List = c.Data.Items, true
	}
	return c, nil
}

// typeNames are the components that become types of their own (objects
// and enums), less what the hand-written halves hold (skipSchema).
func (d *doc) typeNames() []string {
	var out []string
	for _, name := range d.Components.Schemas.Keys {
		if s := d.Components.Schemas.Values[name]; !skipSchema(name, s) && named(s) {
			out = append(out, name)
		}
	}
	return out
}

// inputs are the components a request body reaches: their optional
// fields can be left out, and those that may be null also set to null.
func (d *doc) inputs() map[string]bool {
	seen := map[string]bool{}
	var walk func(s *schema)
	walk = func(s *schema) {
		if s == nil {
			return
		}
		if s.Ref != "" {
			name := refName(s.Ref)
			if !seen[name] {
				seen[name] = true
				walk(d.component(s.Ref))
			}
			return
		}
		for _, k := range s.Properties.Keys {
			walk(s.Properties.Values[k])
		}
		walk(s.Items)
		for _, o := range s.OneOf {
			walk(o)
		}
	}
	for _, item := range d.Paths.Values {
		for _, m := range item.operations() {
			walk(d.requestBody(m[1].(*operation).RequestBody).jsonSchema())
		}
	}
	return seen
}

// skipSchema leaves out what the hand-written halves hold: the error body
// (Error), the page (Pagination), the envelopes every answer comes in, and
// the answers that are not the API's objects.
func skipSchema(name string, s *schema) bool {
	switch name {
	case "Error", "Pagination", "OpenAPIDocument", "Status":
		return true
	}
	for _, k := range s.Properties.Keys {
		if k != "data" && k != "pagination" {
			return false
		}
	}
	return len(s.Properties.Keys) > 0
}

// named says whether a schema becomes a type of its own: an object with
// fields, or an enum.
func named(s *schema) bool {
	base, _ := s.Type.nullable()
	return (base == "object" && len(s.Properties.Keys) > 0 && s.AdditionalProperties != true) ||
		(base == "string" && len(s.Enum) > 0)
}

// isNull says a schema is the type null alone (one side of a oneOf).
func isNull(s *schema) bool { return slices.Equal(s.Type, types{"null"}) }

// itemTypes types the items of arrays the document leaves open on purpose:
// a batch's readings are judged one by one, so the document takes any JSON
// there and refuses a bad one in its own result; a program sends create
// bodies.
var itemTypes = map[string]string{"MeterReadingBatchCreateReadings": "MeterReadingCreate"}

// emitter is what both SDKs' writers keep while they write a file.
type emitter struct {
	d *doc
	// chunks are the declarations in the order written; an inline type
	// follows the type it is part of.
	chunks []string
	// done holds the names of the types written.
	done map[string]bool
	// inputs are the components a request body reaches (doc.inputs).
	inputs map[string]bool
	// enums maps an enum's values to the first type written for them, so
	// a query parameter takes the type of the field it filters on.
	enums map[string]string
}

func newEmitter(d *doc) emitter {
	return emitter{d: d, done: map[string]bool{}, inputs: d.inputs(), enums: map[string]string{}}
}
