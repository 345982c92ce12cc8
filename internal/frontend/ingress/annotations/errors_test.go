package annotations

import (
	"reflect"
	"strings"
	"testing"

	"github.com/causeway/causeway/internal/model"
)

func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ann      map[string]string
		errors   *model.ErrorPages
		backend  *ServiceRef
		problems []problem
	}{
		// custom-http-errors
		{name: "codes", ann: map[string]string{"custom-http-errors": "404,503"}, errors: &model.ErrorPages{Codes: []int{404, 503}}},
		{name: "codes with spaces, unsorted, duplicated", ann: map[string]string{"custom-http-errors": "503, 404 ,503"},
			errors: &model.ErrorPages{Codes: []int{404, 503}}},
		{name: "bounds", ann: map[string]string{"custom-http-errors": "400,599"}, errors: &model.ErrorPages{Codes: []int{400, 599}}},
		{name: "3xx refused", ann: map[string]string{"custom-http-errors": "399,404"}, problems: []problem{invalid("custom-http-errors")}},
		{name: "600 refused", ann: map[string]string{"custom-http-errors": "600"}, problems: []problem{invalid("custom-http-errors")}},
		{name: "leading zero refused", ann: map[string]string{"custom-http-errors": "0404"}, problems: []problem{invalid("custom-http-errors")}},
		{name: "empty item refused", ann: map[string]string{"custom-http-errors": "404,,503"}, problems: []problem{invalid("custom-http-errors")}},
		{name: "50 codes", ann: map[string]string{"custom-http-errors": strings.Repeat("404,", 49) + "404"},
			errors: &model.ErrorPages{Codes: []int{404}}},
		{name: "51 codes refused", ann: map[string]string{"custom-http-errors": strings.Repeat("404,", 50) + "404"},
			problems: []problem{invalid("custom-http-errors")}},

		// default-backend
		{name: "default backend", ann: map[string]string{"default-backend": "error-pages"}, backend: &ServiceRef{Name: "error-pages"}},
		{name: "both", ann: map[string]string{"default-backend": "error-pages", "custom-http-errors": "503"},
			errors: &model.ErrorPages{Codes: []int{503}}, backend: &ServiceRef{Name: "error-pages"}},
		{name: "63-byte name", ann: map[string]string{"default-backend": "a" + strings.Repeat("b", 62)},
			backend: &ServiceRef{Name: "a" + strings.Repeat("b", 62)}},
		{name: "64-byte name refused", ann: map[string]string{"default-backend": "a" + strings.Repeat("b", 63)},
			problems: []problem{invalid("default-backend")}},
		{name: "namespace/name refused", ann: map[string]string{"default-backend": "other/error-pages"}, problems: []problem{invalid("default-backend")}},
		{name: "name:port refused", ann: map[string]string{"default-backend": "error-pages:80"}, problems: []problem{invalid("default-backend")}},
		{name: "leading digit refused", ann: map[string]string{"default-backend": "1pages"}, problems: []problem{invalid("default-backend")}},
		{name: "upper case refused", ann: map[string]string{"default-backend": "Pages"}, problems: []problem{invalid("default-backend")}},

		{name: "disable-proxy-intercept-errors is not supported yet", ann: map[string]string{"disable-proxy-intercept-errors": "true"},
			problems: []problem{ignored("disable-proxy-intercept-errors")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, problems := parseNames(tc.ann)
			checkProblems(t, problems, tc.problems)
			checkClosed(t, res, tc.problems)
			if !reflect.DeepEqual(res.Location.Errors, tc.errors) {
				t.Fatalf("Errors = %+v, want %+v", res.Location.Errors, tc.errors)
			}
			if !reflect.DeepEqual(res.DefaultBackend, tc.backend) {
				t.Fatalf("DefaultBackend = %+v, want %+v", res.DefaultBackend, tc.backend)
			}
		})
	}
}
