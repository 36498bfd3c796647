// Package v1alpha1 contains the BackupConfig API of the backup.myapp.dev group.
// +kubebuilder:object:generate=true
// +groupName=backup.myapp.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The registration follows k8s.io/api rather than controller-runtime's
// deprecated scheme.Builder, so importing this package pulls in nothing but
// apimachinery.
var (
	// GroupVersion is the group and version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "backup.myapp.dev", Version: "v1alpha1"}

	// SchemeBuilder collects the functions that add this group-version's
	// types to a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers BackupConfig and BackupConfigList, and the meta
// types (options, status, watch events) every group-version needs.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &BackupConfig{}, &BackupConfigList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
