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

package reliability

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// traceMyApps prints every version of every MyApp in ns (UID, resource
// version, deletion, finalizers) as the API server's watch delivers it, when
// RELIABILITY_TRACE is set. It is how a scenario's failure is told apart from
// the API server's own behaviour: it showed the finalizer race behind B1 in
// docs/reliability.md.
func traceMyApps(t *testing.T, ns string) {
	if os.Getenv("RELIABILITY_TRACE") == "" {
		return
	}
	dc, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "apps.myapp.dev", Version: "v1alpha1", Resource: "myapps"}
	w, err := dc.Resource(gvr).Namespace(ns).Watch(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			obj, err := meta.Accessor(ev.Object)
			if err != nil {
				continue
			}
			deleting := ""
			if obj.GetDeletionTimestamp() != nil {
				deleting = " deleting"
			}
			fmt.Fprintf(os.Stderr, "%s TRACE %s MyApp %s uid %s rv %s%s finalizers [%s]\n",
				time.Now().UTC().Format("15:04:05.000"), ev.Type, obj.GetName(), obj.GetUID(),
				obj.GetResourceVersion(), deleting, strings.Join(obj.GetFinalizers(), ","))
		}
	}()
}
