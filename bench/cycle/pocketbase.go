package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
)

// seedPocketBase gives the PocketBase at base what bench/compare.sh lists
// and creates there, so that the comparison is of the same data: a
// collection "bills" whose fields are those of the objects of like (a page
// of GET /v1/bills), and records of those objects, round-robin, with conns
// requests at a time. Strings become text fields, numbers number fields,
// booleans bool fields, and objects and nulls JSON fields; "id" is left to
// PocketBase, whose IDs have their own form. It prints the superuser's
// token (list and create need it) and writes one record's body to record.
func seedPocketBase(base, superuser, like string, records, conns int, record string) error {
	email, password, ok := strings.Cut(superuser, ":")
	if !ok {
		return fmt.Errorf("pocketbase: -superuser %q: want EMAIL:PASSWORD", superuser)
	}
	raw, err := os.ReadFile(like)
	if err != nil {
		return err
	}
	var page struct{ Data []map[string]any }
	if err := json.Unmarshal(raw, &page); err != nil {
		return fmt.Errorf("pocketbase: %s: %w", like, err)
	}
	if len(page.Data) == 0 {
		return fmt.Errorf("pocketbase: %s lists no objects", like)
	}
	for _, o := range page.Data {
		delete(o, "id")
	}
	auth, err := call("POST", base+"/api/collections/_superusers/auth-with-password", "",
		map[string]any{"identity": email, "password": password}, http.StatusOK)
	if err != nil {
		return err
	}
	token, _ := auth["token"].(string)
	var fields []map[string]any
	for _, name := range slices.Sorted(maps.Keys(page.Data[0])) {
		typ := "json"
		switch page.Data[0][name].(type) {
		case string:
			typ = "text"
		case float64:
			typ = "number"
		case bool:
			typ = "bool"
		}
		fields = append(fields, map[string]any{"name": name, "type": typ})
	}
	if _, err := call("POST", base+"/api/collections", token,
		map[string]any{"name": "bills", "type": "base", "fields": fields}, http.StatusOK); err != nil {
		return err
	}
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Go(func() {
			for i := w; i < records; i += conns {
				if _, err := call("POST", base+"/api/collections/bills/records", token, page.Data[i%len(page.Data)], http.StatusOK); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	body, err := json.Marshal(page.Data[0])
	if err != nil {
		return err
	}
	if err := os.WriteFile(record, body, 0o644); err != nil {
		return err
	}
	fmt.Println(token)
	return nil
}
