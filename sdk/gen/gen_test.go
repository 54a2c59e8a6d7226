package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The committed SDK files are what the generator writes from the document
// as it is: a change to the document without `go run ./sdk/gen` fails here.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join(root, path))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the document makes: run go run ./sdk/gen", path)
		}
	}
}

func TestNames(t *testing.T) {
	for in, want := range map[string]string{
		"room_id": "RoomID", "listBills": "ListBills", "AccountId": "AccountID", "bill.created": "BillCreated",
		"qr_payload": "QRPayload", "getOpenAPIJSON": "GetOpenAPIJSON", "meter.reading.created": "MeterReadingCreated",
		"doc_url": "DocURL", "line-register": "LineRegister",
	} {
		if got := exported(in); got != want {
			t.Errorf("exported(%q) = %q, want %q", in, got, want)
		}
	}
	if got := unexported("payment_link_id"); got != "paymentLinkID" {
		t.Errorf("unexported: %q", got)
	}
}
