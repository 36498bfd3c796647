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

// Package health runs the Argo CD resource health checks the project ships
// in config/health the way Argo CD runs them: with gopher-lua, the object as
// the global obj, and the table the script returns as the health. The
// controllers' tests use it over real objects at every stage of both
// lifecycles, next to kstatus, so the shipped checks cannot drift from the
// status the controllers write.
package health

import (
	"errors"
	"fmt"
	"os"
	"sort"

	lua "github.com/yuin/gopher-lua"
	"sigs.k8s.io/yaml"
)

// Argo CD's health statuses.
const (
	Healthy     = "Healthy"
	Progressing = "Progressing"
	Degraded    = "Degraded"
	Suspended   = "Suspended"
)

// Result is what a health check returned.
type Result struct {
	Status  string
	Message string
}

// LoadArgoCDChecks reads the checks from the argocd-cm patch at path: the
// script of each resource.customizations.health.<group>_<Kind> key.
func LoadArgoCDChecks(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(raw, &cm); err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	if len(cm.Data) == 0 {
		return nil, fmt.Errorf("%s holds no health checks", path)
	}
	return cm.Data, nil
}

// CheckKey is the argocd-cm key of the health check of a group and kind.
func CheckKey(group, kind string) string {
	return "resource.customizations.health." + group + "_" + kind
}

// Run runs a health check script over obj, an object as its JSON decodes.
func Run(script string, obj map[string]any) (Result, error) {
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	// The libraries Argo CD opens for health checks.
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		l.Push(l.NewFunction(lib.open))
		l.Push(lua.LString(lib.name))
		l.Call(1, 0)
	}
	l.SetGlobal("obj", toLua(l, obj))
	if err := l.DoString(script); err != nil {
		return Result{}, err
	}
	table, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		return Result{}, errors.New("the health check returned no table")
	}
	res := Result{Status: lua.LVAsString(table.RawGetString("status")), Message: lua.LVAsString(table.RawGetString("message"))}
	switch res.Status {
	case Healthy, Progressing, Degraded, Suspended, "Missing", "Unknown":
		return res, nil
	}
	return Result{}, fmt.Errorf("the health check returned status %q, which Argo CD does not know", res.Status)
}

// toLua converts a decoded JSON value into a Lua value, as Argo CD does:
// objects and arrays become tables (arrays indexed from 1), numbers become
// Lua numbers.
func toLua(l *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case int64:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case float64:
		return lua.LNumber(v)
	case []any:
		t := l.NewTable()
		for _, item := range v {
			t.Append(toLua(l, item))
		}
		return t
	case map[string]any:
		t := l.NewTable()
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.RawSetString(k, toLua(l, v[k]))
		}
		return t
	default:
		return lua.LString(fmt.Sprint(v))
	}
}
