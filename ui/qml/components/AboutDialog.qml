// About EXL Studio: version, git commit, build type, the CUDA architectures built in, and the
// CUDA setup found at run time (driver, cuBLAS, GPUs). The figures are probed when first shown.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

ScrollingDialog {
    id: dialog
    objectName: "aboutDialog"
    title: qsTr("About EXL Studio")
    preferredWidth: 640
    // The figures are probed when the dialog is first shown.
    property AboutInfo info: null
    onAboutToShow: if (!info) info = infoComponent.createObject(dialog)
    Component { id: infoComponent; AboutInfo {} }

    footer: DialogButtonBox {
        Button {
            text: qsTr("Close")
            DialogButtonBox.buttonRole: DialogButtonBox.RejectRole
        }
    }

    function orNone(value, none) { return value && value.length > 0 ? value : none }

        Label {
            text: qsTr("Chat with local EXL2 models on your GPU, or on the CPU where there is none.")
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        Label {
            objectName: "licence"
            text: qsTr("Free software under the MIT licence.")
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        GridLayout {
            columns: 2
            columnSpacing: 16
            rowSpacing: 4
            Layout.fillWidth: true
            visible: dialog.info !== null

            Label { text: qsTr("Version"); font.bold: true }
            Label { text: dialog.info ? dialog.info.version : ""; Layout.fillWidth: true }
            Label { text: qsTr("Git commit"); font.bold: true }
            Label { text: dialog.info ? dialog.info.gitCommit : ""; Layout.fillWidth: true }
            Label { text: qsTr("Build type"); font.bold: true }
            Label { text: dialog.info ? dialog.info.buildType : ""; Layout.fillWidth: true }
            Label { text: qsTr("CUDA architectures"); font.bold: true }
            Label {
                text: dialog.info ? dialog.orNone(dialog.info.cudaArchitectures, qsTr("none (built without CUDA)")) : ""
                Layout.fillWidth: true
            }
            Label { text: qsTr("CUDA toolkit"); font.bold: true; visible: dialog.info && dialog.info.cudaBuilt }
            Label {
                visible: dialog.info && dialog.info.cudaBuilt
                text: dialog.info ? qsTr("%1 (runtime built in)").arg(dialog.info.cudaToolkit) : ""
                Layout.fillWidth: true
            }
            Label { text: qsTr("NVIDIA driver"); font.bold: true; visible: dialog.info && dialog.info.cudaBuilt }
            Label {
                visible: dialog.info && dialog.info.cudaBuilt
                text: !dialog.info ? ""
                      : dialog.info.driverCuda.length === 0 ? qsTr("not found")
                      : qsTr("%1 (supports CUDA %2)").arg(dialog.orNone(dialog.info.driverVersion, qsTr("version unknown")))
                                                      .arg(dialog.info.driverCuda)
                Layout.fillWidth: true
            }
            Label { text: qsTr("cuBLAS"); font.bold: true; visible: dialog.info && dialog.info.cudaBuilt }
            Label {
                visible: dialog.info && dialog.info.cudaBuilt
                text: !dialog.info ? ""
                      : dialog.info.cublasPath.length === 0 ? qsTr("not found")
                      : "%1 (%2)".arg(dialog.orNone(dialog.info.cublasVersion, "?")).arg(dialog.info.cublasPath)
                wrapMode: Text.WrapAnywhere
                Layout.fillWidth: true
            }
            Label { text: qsTr("GPUs"); font.bold: true; visible: dialog.info && dialog.info.devices.length > 0 }
            Label {
                visible: dialog.info && dialog.info.devices.length > 0
                text: dialog.info ? dialog.info.devices.join("\n") : ""
                Layout.fillWidth: true
            }
            Label { text: qsTr("Backend"); font.bold: true }
            Label {
                text: !dialog.info ? ""
                      : dialog.info.cudaUsable ? qsTr("CUDA")
                      : qsTr("CPU: %1").arg(dialog.info.cudaStatus)
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Label { text: qsTr("Qt"); font.bold: true }
            Label { text: dialog.info ? dialog.info.qtVersion : ""; Layout.fillWidth: true }
        }

        Button {
            text: qsTr("Copy details")
            Accessible.name: text
            enabled: dialog.info !== null
            onClicked: dialog.info.copyReport()
        }
}
