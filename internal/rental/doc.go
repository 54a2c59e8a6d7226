// Package rental is the domain of the service: the landlord's resources, their
// states and every rule that decides a change (issuing, deleting and settling
// bills; opening, ending and confirming payments; moving in; deleting rooms
// and properties; who may hold which key; plans and their limits), the
// billing arithmetic and the one error type every layer speaks. A rule is a
// function of plain values returning the new state or a *rental.Error. It
// knows nothing of SQL or HTTP, so the rules can be read (and table-tested)
// in one place and each outer layer only loads, saves and translates.
package rental
