// A highlighted button with a plain rectangle as its background. The Material style draws raised
// buttons through a shader effect (the elevation shadow) that the software scene graph (offscreen,
// Xvfb without GL, some virtual machines) does not render, which left the white label on the page
// background.
import QtQuick
import QtQuick.Controls
import QtQuick.Controls.Material

Button {
    id: control
    highlighted: true
    background: Rectangle {
        implicitWidth: 64
        implicitHeight: control.Material.buttonHeight
        radius: 2
        color: !control.enabled ? control.Material.buttonDisabledColor
               : control.down ? Qt.darker(control.Material.accentColor, 1.25)
               : control.hovered ? Qt.lighter(control.Material.accentColor, 1.1)
               : control.Material.accentColor
    }
}
