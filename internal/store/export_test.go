package store

// KeyForRequestSQL is the key lookup's query, for TestEveryLookedUpColumnCounts.
const KeyForRequestSQL = keyForRequest
