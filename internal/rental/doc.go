// Package rental is the domain of the service: the landlord's resources, their
// states and every rule that decides a change (recording and correcting
// meter readings; issuing, deleting and settling bills; opening, ending and
// confirming payments, and which side's provider may confirm them; where a
// new payment page lives and whether a bill notice carries its link; when a
// paid bill's receipt is due and how it is numbered; moving in and out;
// closing a developer's month; deleting rooms and properties; who may hold
// which key and how a key is minted; plans and their limits; what a webhook
// delivery's attempt leads to and when an endpoint that keeps failing is
// disabled; whose consent page an answer may take), the
// caller's rules too (which key is valid, which account a request acts on
// and with which scopes, the sandbox's daily limit and the monthly quota,
// what is billable; a provider's confirmation; the page, order and event
// type filters of lists), the calendar they count in (days and months in
// Thailand), the billing arithmetic and the one error type every layer
// speaks, with its catalogue: what each error says, down to a request's
// body or query that cannot be read (input.go) and the service's refusals
// of a request as a whole (refusal.go), so that the outer layers pick an
// error but never word one. A rule is a function of plain values returning the new state or
// a *rental.Error. It knows nothing of SQL or HTTP, so the rules can be
// read (and table-tested) in one place and each outer layer only loads,
// saves and translates. The words the pages show (a scope's plain Thai and
// English) are the pages' own, in internal/web; what a slip's outcome tells
// the tenant (SlipReason, SlipResultText) is worded here once, as an
// error's message is, because the payment page and the LINE answer queued
// by the store must say the same.
package rental
