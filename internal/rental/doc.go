// Package rental is the domain of the service: the landlord's resources, their
// states and rules, the billing arithmetic and the one error type every layer
// speaks. It knows nothing of SQL or HTTP, so the rules can be read (and
// tested) in one place and each outer layer only translates.
package rental
