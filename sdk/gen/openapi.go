package main

import (
	"fmt"
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
