// Package v1alpha1 contains the MyApp API of the apps.myapp.dev group.
// +kubebuilder:object:generate=true
// +groupName=apps.myapp.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version used to register these objects.
	GroupVersion = schema.GroupVersion{Group: "apps.myapp.dev", Version: "v1alpha1"}

	// SchemeBuilder adds the types of this group-version to a scheme. It is
	// apimachinery's, so importing the API needs no controller-runtime.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types in this group-version to the given scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &MyApp{}, &MyAppList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}
