// A slider with its name on the left and its current value on the right.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ColumnLayout {
    id: root
    property string label
    property string valueText
    property alias from: slider.from
    property alias to: slider.to
    property alias stepSize: slider.stepSize
    property real value
    signal moved(real value)

    spacing: 0
    RowLayout {
        Layout.fillWidth: true
        Label { text: root.label; Layout.fillWidth: true }
        Label { text: root.valueText; font.bold: true }
    }
    Slider {
        id: slider
        Layout.fillWidth: true
        value: root.value
        snapMode: Slider.SnapAlways
        Accessible.name: root.label
        onMoved: root.moved(value)
    }
}
