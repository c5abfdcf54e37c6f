// Package auth signs people in to the evidence UI and decides what each may
// do: built-in users with Argon2id password hashes, or identities asserted
// by an authenticating proxy; sessions, CSRF tokens and per-tenant roles.
package auth

import (
	"fmt"
	"slices"
	"sort"

	"github.com/docketlabs/docket/ledger/access"
)

// Grants maps a tenant to the role held there; access.AllTenants ("*")
// grants a role in every tenant.
type Grants map[string]access.Role

// Validate checks tenant names and roles.
func (g Grants) Validate() error {
	for tenant, role := range g {
		if tenant == "" {
			return fmt.Errorf("auth: grant with an empty tenant")
		}
		if rank(role) == 0 {
			return fmt.Errorf("auth: tenant %q: unknown role %q (viewer, auditor or admin)", tenant, role)
		}
	}
	return nil
}

func rank(r access.Role) int {
	switch r {
	case access.RoleViewer:
		return 1
	case access.RoleAuditor:
		return 2
	case access.RoleAdmin:
		return 3
	}
	return 0
}

// merge adds other, keeping the stronger role where both grant a tenant.
func (g Grants) merge(other Grants) {
	for t, r := range other {
		if rank(r) > rank(g[t]) {
			g[t] = r
		}
	}
}

// Identity is a signed-in person.
type Identity struct {
	User   string `json:"user"`
	Grants Grants `json:"grants"`
}

// Role is the role the identity holds in tenant: the stronger of the
// tenant's own grant and the all-tenants grant; "" when none.
func (id Identity) Role(tenant string) access.Role {
	r, all := id.Grants[tenant], id.Grants[access.AllTenants]
	if rank(all) > rank(r) {
		return all
	}
	return r
}

// Principal is who acts on tenant, for the ledger's access checks.
func (id Identity) Principal(tenant string) access.Principal {
	return access.Principal{User: id.User, Role: id.Role(tenant), Tenants: []string{tenant}}
}

// Tenants lists the tenants where the identity holds at least min; a list
// holding only access.AllTenants means every tenant.
func (id Identity) Tenants(min access.Role) []string {
	if rank(id.Grants[access.AllTenants]) >= rank(min) {
		return []string{access.AllTenants}
	}
	var out []string
	for t, r := range id.Grants {
		if rank(r) >= rank(min) {
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// HasAnywhere reports whether some tenant grants at least min.
func (id Identity) HasAnywhere(min access.Role) bool { return len(id.Tenants(min)) > 0 }

// Covers reports whether tenants (as from Tenants) include tenant.
func Covers(tenants []string, tenant string) bool {
	return slices.Contains(tenants, access.AllTenants) || slices.Contains(tenants, tenant)
}

// As is the identity acting with role in every tenant where it holds at
// least that role, for operations whose tenant is known only later.
func (id Identity) As(role access.Role) access.Principal {
	return access.Principal{User: id.User, Role: role, Tenants: id.Tenants(role)}
}
