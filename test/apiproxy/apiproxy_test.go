/*
Copyright 2026 The myapp-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package apiproxy

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		method, target string
		want           Request
		ok             bool
	}{
		{http.MethodGet, "/api/v1/namespaces/ns/services/web", Request{"get", "services"}, true},
		{http.MethodGet, "/apis/apps/v1/deployments?watch=true", Request{"watch", "deployments"}, true},
		{http.MethodGet, "/apis/apps/v1/namespaces/ns/deployments?labelSelector=x", Request{"list", "deployments"}, true},
		{http.MethodPatch, "/apis/apps.myapp.dev/v1alpha1/namespaces/ns/myapps/web/status", Request{"patch", "myapps/status"}, true},
		{http.MethodPost, "/apis/events.k8s.io/v1/namespaces/ns/events", Request{"create", "events"}, true},
		{http.MethodPut, "/apis/coordination.k8s.io/v1/namespaces/ns/leases/id", Request{"update", "leases"}, true},
		{http.MethodDelete, "/apis/apps.myapp.dev/v1alpha1/namespaces/ns/myapps/web", Request{"delete", "myapps"}, true},
		{http.MethodDelete, "/apis/apps.myapp.dev/v1alpha1/namespaces/ns/myapps", Request{"deletecollection", "myapps"}, true},
		{http.MethodGet, "/api/v1/namespaces/kube-system", Request{"get", "namespaces"}, true},
		{http.MethodGet, "/api/v1/namespaces", Request{"list", "namespaces"}, true},
		{http.MethodGet, "/apis", Request{}, false},
		{http.MethodGet, "/version", Request{}, false},
		{http.MethodGet, "/api/v1", Request{}, false},
	} {
		got, ok := Classify(httptest.NewRequest(tc.method, tc.target, nil))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s %s: got %v %t, want %v %t", tc.method, tc.target, got, ok, tc.want, tc.ok)
		}
	}
}

func TestIsWrite(t *testing.T) {
	for verb, want := range map[string]bool{"create": true, "update": true, "patch": true, "delete": true,
		"deletecollection": true, "get": false, "list": false, "watch": false} {
		if IsWrite(verb) != want {
			t.Errorf("IsWrite(%q) = %t, want %t", verb, !want, want)
		}
	}
}
