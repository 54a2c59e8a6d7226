package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Where the SDKs' generated halves go, from the repository's root, and
// where the docs (/docs) take the month written with each SDK from: the
// SDKs are modules of their own, which the service's module cannot embed
// from.
const (
	goOut      = "sdk/go/api.go"
	tsOut      = "sdk/typescript/src/api.ts"
	goMonthOut = "internal/web/examples/month_go.txt"
	tsMonthOut = "internal/web/examples/month_ts.txt"
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
	goMonth, err := exampleBody(filepath.Join(root, "sdk/go/example_test.go"), "Example_month")
	if err != nil {
		return nil, err
	}
	tsMonth, err := os.ReadFile(filepath.Join(root, "sdk/typescript/examples/month.ts"))
	if err != nil {
		return nil, err
	}
	return map[string][]byte{goOut: g, tsOut: ts, goMonthOut: goMonth, tsMonthOut: tsMonth}, nil
}

// exampleBody is the body of a Go Example function, up to its Output
// comment, one tab of indentation taken off: the code as a program's main
// would hold it.
func exampleBody(path, name string) ([]byte, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	_, body, ok := strings.Cut(string(src), "func "+name+"() {\n")
	body, _, ok2 := strings.Cut(body, "\n\t// Output:")
	if !ok || !ok2 {
		return nil, fmt.Errorf("%s: no %s with an Output comment", path, name)
	}
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "\t")
	}
	return []byte(strings.Join(lines, "\n") + "\n"), nil
}
