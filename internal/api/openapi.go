package api

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"go.yaml.in/yaml/v3"

	"rentapi/internal/rental"
)

// openapiYAML is the contract, written by hand; the JSON form is derived
// from it at start-up so the two can never differ.
//
//go:embed openapi.yaml
var openapiYAML []byte

// document is the OpenAPI description in both forms.
type document struct {
	yaml []byte
	json []byte
}

// Document is the OpenAPI document as written (YAML), the bytes
// /openapi.yaml serves: the pages render the API reference (/docs) from it,
// so the reference and the contract cannot differ.
func Document() []byte { return slices.Clone(openapiYAML) }

// loadDocument derives the document's forms from the embedded YAML, once
// per process: the result is a function of bytes compiled into the
// binary, read-only once made, and parsing it again for every server
// (tests make hundreds) was most of a new server's cost.
var loadDocument = sync.OnceValues(func() (*document, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(openapiYAML, &root); err != nil {
		return nil, fmt.Errorf("api: openapi.yaml: %w", err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, &root); err != nil {
		return nil, fmt.Errorf("api: openapi.yaml: %w", err)
	}
	return &document{yaml: openapiYAML, json: buf.Bytes()}, nil
})

// WriteJSON writes a YAML node as JSON, keeping the order of mapping keys
// (the document reads top-down: info, paths, components): the one
// conversion behind /openapi.json and the examples of /docs.
func WriteJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		return WriteJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return WriteJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			buf.Write(k)
			buf.WriteByte(':')
			if err := WriteJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := WriteJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		if n.Tag == "!!str" {
			v = n.Value
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.Write(b)
	default:
		return fmt.Errorf("line %d: unsupported YAML node", n.Line)
	}
	return nil
}

func (s *Server) handleOpenAPI(format string) http.Handler {
	body, ctype := s.doc.json, "application/json"
	if format == "yaml" {
		body, ctype = s.doc.yaml, "application/yaml"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(body)
	})
}

type health struct {
	Status string `json:"status"`
}

// handleHealth answers while the process is up.
func (s *Server) handleHealth() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		renderJSON(http.StatusOK, health{"ok"}).write(r.Context(), w)
	})
}

// handleReady answers 200 only while the database answers.
func (s *Server) handleReady() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := s.db.Ping(r.Context()); err != nil {
			s.log.ErrorContext(r.Context(), "readiness", "error", err.Error())
			s.writeError(w, r, rental.DatabaseUnreachable())
			return
		}
		renderJSON(http.StatusOK, health{"ok"}).write(r.Context(), w)
	})
}
