// A check box whose text wraps onto more lines instead of being cut off (long Dutch and German
// labels in narrow windows).
import QtQuick
import QtQuick.Controls

CheckBox {
    id: control
    contentItem: Label {
        text: control.text
        font: control.font
        wrapMode: Text.Wrap
        verticalAlignment: Text.AlignVCenter
        leftPadding: control.indicator && !control.mirrored ? control.indicator.width + control.spacing : 0
        rightPadding: control.indicator && control.mirrored ? control.indicator.width + control.spacing : 0
        opacity: control.enabled ? 1.0 : 0.38
    }
}
