package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// Where the SDKs' generated halves go, from the repository's root.
const (
	goOut = "sdk/go/api.go"
	tsOut = "sdk/typescript/src/api.ts"
)

func main() {
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	files, err := generate(root)
	if err != nil {
		return err
	}
	for path, b := range files {
		if err := os.WriteFile(filepath.Join(root, path), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generate returns each generated file by its path from the root.
func generate(root string) (map[string][]byte, error) {
	src, err := os.ReadFile(filepath.Join(root, "internal/api/openapi.yaml"))
	if err != nil {
		return nil, err
	}
	var d doc
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("openapi.yaml: %w", err)
	}
	g, err := goFile(&d)
	if err != nil {
		return nil, err
	}
	ts, err := tsFile(&d)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{goOut: g, tsOut: ts}, nil
}
