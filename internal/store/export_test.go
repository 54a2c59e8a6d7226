package store

// KeyForRequestSQL is the key lookup's query, for TestEveryLookedUpColumnCounts.
const KeyForRequestSQL = keyForRequest

// EndpointsReadAhead reports whether tx read its events' endpoints ahead
// (see readEndpointsAhead), for TestReadingReadsEndpointsAhead.
func (tx *Tx) EndpointsReadAhead() bool { return tx.endpoints.read }
