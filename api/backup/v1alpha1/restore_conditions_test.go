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

package v1alpha1

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRestoreFailureReasonsAreTheFailedBlock: RestoreFailureReasons holds
// every constant of the block "Reasons of a Restore that failed", in its
// order, so a reason added there and not to the list fails here.
func TestRestoreFailureReasonsAreTheFailedBlock(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "restore_conditions.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST || gd.Doc == nil || !strings.HasPrefix(gd.Doc.Text(), "Reasons of a Restore that failed.") {
			continue
		}
		for _, spec := range gd.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				s, err := strconv.Unquote(v.(*ast.BasicLit).Value)
				if err != nil {
					t.Fatal(err)
				}
				block = append(block, s)
			}
		}
	}
	if len(block) == 0 {
		t.Fatal(`restore_conditions.go has no const block documented "Reasons of a Restore that failed."`)
	}
	if !slices.Equal(RestoreFailureReasons, block) {
		t.Fatalf("RestoreFailureReasons = %v; the block of failed reasons holds %v", RestoreFailureReasons, block)
	}
}
