// A dialog's background as a plain rectangle: the Material style draws it through an elevation
// layer that the software scene graph (offscreen, Xvfb without GL, some virtual machines) does
// not render, which left a dialog's body see-through there (as AccentButton's background).
import QtQuick
import QtQuick.Controls.Material

Rectangle {
    color: Material.dialogColor
    radius: 4
    border.width: 1
    border.color: Material.dividerColor
}
