// Command gen writes the generated half of the SDKs from the OpenAPI
// document, internal/api/openapi.yaml: each SDK's types, parameters and
// one method per operation (sdk/go/api.go, sdk/typescript/src/api.ts).
// The hand-written half (the client, retries, errors, pages, webhook
// signatures) stays small because the document says everything else.
//
// Run it from the repository root after the document changes:
//
//	go run ./sdk/gen
//
// Its test fails while the committed files differ from what it writes, so
// an SDK cannot drift from the contract the service is tested against.
package main
