package model

import (
	"slices"
	"time"
)

// GeoIP2 (use-geoip2): nginx's geoip2 module (Debian's
// libnginx-mod-http-geoip2) looks the client's address up in MaxMind
// databases and sets ingress-nginx's $geoip2_* variables, which snippets
// and the access log may read.

// GeoIP2Config is the ConfigMap's use-geoip2 and
// geoip2-autoreload-in-minutes.
type GeoIP2Config struct {
	Enabled bool
	// AutoReload, when set, has nginx reopen a database file that
	// changed, at most this often (whole minutes).
	AutoReload time.Duration
}

// GeoIP2Variable is one variable a database sets: Path is the field's
// path in the database's records (as the module's directive reads it),
// Default the value when the address has none ("" for empty).
type GeoIP2Variable struct {
	Name, Default string
	Path          []string
}

// GeoIP2Edition is a MaxMind database edition, its file
// "<ID>.mmdb", and the variables ingress-nginx defines from it.
type GeoIP2Edition struct {
	ID        string
	Variables []GeoIP2Variable
}

func geoVar(name string, path ...string) GeoIP2Variable {
	return GeoIP2Variable{Name: name, Path: path}
}

func geoVarOr0(name string, path ...string) GeoIP2Variable {
	return GeoIP2Variable{Name: name, Default: "0", Path: path}
}

var (
	countryVars = []GeoIP2Variable{
		geoVar("geoip2_country_code", "country", "iso_code"),
		geoVar("geoip2_country_name", "country", "names", "en"),
		geoVar("geoip2_country_geoname_id", "country", "geoname_id"),
		geoVar("geoip2_continent_code", "continent", "code"),
		geoVar("geoip2_continent_name", "continent", "names", "en"),
		geoVar("geoip2_continent_geoname_id", "continent", "geoname_id"),
	}
	cityVars = []GeoIP2Variable{
		geoVar("geoip2_city_country_code", "country", "iso_code"),
		geoVar("geoip2_city_country_name", "country", "names", "en"),
		geoVar("geoip2_city_country_geoname_id", "country", "geoname_id"),
		geoVar("geoip2_city", "city", "names", "en"),
		geoVar("geoip2_city_geoname_id", "city", "geoname_id"),
		geoVar("geoip2_postal_code", "postal", "code"),
		geoVar("geoip2_dma_code", "location", "metro_code"),
		geoVar("geoip2_latitude", "location", "latitude"),
		geoVar("geoip2_longitude", "location", "longitude"),
		geoVar("geoip2_time_zone", "location", "time_zone"),
		geoVar("geoip2_region_code", "subdivisions", "0", "iso_code"),
		geoVar("geoip2_region_name", "subdivisions", "0", "names", "en"),
		geoVar("geoip2_region_geoname_id", "subdivisions", "0", "geoname_id"),
		geoVar("geoip2_subregion_code", "subdivisions", "1", "iso_code"),
		geoVar("geoip2_subregion_name", "subdivisions", "1", "names", "en"),
		geoVar("geoip2_subregion_geoname_id", "subdivisions", "1", "geoname_id"),
		geoVar("geoip2_city_continent_code", "continent", "code"),
		geoVar("geoip2_city_continent_name", "continent", "names", "en"),
	}
	asnVars = []GeoIP2Variable{
		geoVar("geoip2_asn", "autonomous_system_number"),
		geoVar("geoip2_org", "autonomous_system_organization"),
	}
)

// GeoIP2Editions are the editions ingress-nginx reads (its template's
// list), with its variables. Two editions may set one variable (the
// GeoLite2 and GeoIP2 flavours of a database): the first available in
// this order sets it.
var GeoIP2Editions = []GeoIP2Edition{
	{ID: "GeoLite2-Country", Variables: countryVars},
	{ID: "GeoIP2-Country", Variables: countryVars},
	{ID: "GeoLite2-City", Variables: cityVars},
	{ID: "GeoIP2-City", Variables: cityVars},
	{ID: "GeoLite2-ASN", Variables: asnVars},
	{ID: "GeoIP2-ASN", Variables: asnVars},
	{ID: "GeoIP2-ISP", Variables: []GeoIP2Variable{
		geoVar("geoip2_isp", "isp"),
		geoVar("geoip2_isp_org", "organization"),
		geoVarOr0("geoip2_asn", "autonomous_system_number"),
	}},
	{ID: "GeoIP2-Connection-Type", Variables: []GeoIP2Variable{geoVar("geoip2_connection_type", "connection_type")}},
	{ID: "GeoIP2-Anonymous-IP", Variables: []GeoIP2Variable{
		geoVar("geoip2_is_anon", "is_anonymous"),
		geoVarOr0("geoip2_is_anonymous", "is_anonymous"),
		geoVarOr0("geoip2_is_anonymous_vpn", "is_anonymous_vpn"),
		geoVarOr0("geoip2_is_hosting_provider", "is_hosting_provider"),
		geoVarOr0("geoip2_is_public_proxy", "is_public_proxy"),
		geoVarOr0("geoip2_is_tor_exit_node", "is_tor_exit_node"),
	}},
}

// LookupGeoIP2Edition finds an edition by ID.
func LookupGeoIP2Edition(id string) (GeoIP2Edition, bool) {
	i := slices.IndexFunc(GeoIP2Editions, func(e GeoIP2Edition) bool { return e.ID == id })
	if i < 0 {
		return GeoIP2Edition{}, false
	}
	return GeoIP2Editions[i], true
}

// GeoIP2VariableNames are every variable of GeoIP2Editions, sorted, each
// once.
func GeoIP2VariableNames() []string {
	var out []string
	for _, e := range GeoIP2Editions {
		for _, v := range e.Variables {
			out = append(out, v.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
