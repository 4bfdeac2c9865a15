// The Hugging Face tab's left column: the search (text, EXL2/EXL3/all, by downloads or recency),
// an interrupted download to resume, and the results (name, downloads, likes, updated, tags), which
// scroll. Choosing a result opens its page on the right (HubRepoPanel).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import ExlStudio

ColumnLayout {
    id: root
    required property HubViewModel hub
    spacing: 8

    function focusSearch() { queryField.forceActiveFocus() }
    function compact(n) {
        return n >= 1e6 ? qsTr("%1M").arg(Units.number(n / 1e6, 1))
             : n >= 1e3 ? qsTr("%1k").arg(Units.number(n / 1e3, 1)) : Units.number(n, 0)
    }

    RowLayout {
        Layout.fillWidth: true
        spacing: 8
        TextField {
            id: queryField
            objectName: "hubSearchField"
            Layout.fillWidth: true
            Layout.minimumWidth: 80
            text: root.hub.query
            placeholderText: qsTr("Search models")
            selectByMouse: true
            Accessible.name: qsTr("Search the Hugging Face Hub")
            onTextEdited: root.hub.query = text
            onAccepted: root.hub.search()
        }
        Button {
            objectName: "hubSearchButton"
            text: qsTr("Search")
            enabled: !root.hub.offline
            Accessible.name: qsTr("Search the Hugging Face Hub")
            onClicked: root.hub.search()
        }
    }
    Flow {
        Layout.fillWidth: true
        spacing: 8
        ComboBox {
            objectName: "hubFormatFilter"
            implicitContentWidthPolicy: ComboBox.WidestText
            // The view model's filter: 0 all, 1 EXL2, 2 EXL3.
            model: [qsTr("EXL2"), qsTr("EXL3"), qsTr("All formats")]
            currentIndex: root.hub.formatFilter === 0 ? 2 : root.hub.formatFilter - 1
            Accessible.name: qsTr("Model format")
            onActivated: i => { root.hub.formatFilter = i === 2 ? 0 : i + 1; root.hub.search() }
        }
        ComboBox {
            objectName: "hubSortOrder"
            implicitContentWidthPolicy: ComboBox.WidestText
            model: [qsTr("Most downloads"), qsTr("Recently updated")]
            currentIndex: root.hub.sortOrder
            Accessible.name: qsTr("Sort order")
            onActivated: i => { root.hub.sortOrder = i; root.hub.search() }
        }
        BusyIndicator {
            running: root.hub.searching
            visible: running
            height: 32
            width: 32
            Accessible.name: qsTr("Searching…")
        }
    }
    Label {
        Layout.fillWidth: true
        visible: root.hub.offline
        wrapMode: Text.Wrap
        text: qsTr("Offline (HF_HUB_OFFLINE is set): the Hub is not contacted. Models already in the cache are listed on “On this computer”.")
    }
    Label {
        objectName: "hubSearchError"
        Layout.fillWidth: true
        visible: root.hub.searchError.length > 0
        wrapMode: Text.Wrap
        color: "#c62828"
        text: root.hub.searchError
    }
    // A download the last run did not finish, or one that failed: resume it.
    Pane {
        objectName: "hubInterrupted"
        Layout.fillWidth: true
        visible: root.hub.download.interrupted
        padding: 8
        ColumnLayout {
            width: parent.width
            spacing: 6
            Label {
                Layout.fillWidth: true
                wrapMode: Text.WrapAnywhere
                text: qsTr("Unfinished download: %1").arg(root.hub.download.name)
            }
            Label {
                Layout.fillWidth: true
                visible: root.hub.download.error.length > 0
                wrapMode: Text.Wrap
                color: "#c62828"
                text: root.hub.download.error
            }
            Flow {
                Layout.fillWidth: true
                spacing: 8
                AccentButton {
                    objectName: "hubResumeButton"
                    text: qsTr("Resume")
                    Accessible.name: qsTr("Resume the download")
                    onClicked: root.hub.download.resume()
                }
                Button {
                    text: qsTr("Forget")
                    Accessible.name: qsTr("Forget the unfinished download")
                    onClicked: root.hub.download.discard()
                }
            }
        }
    }
    Label {
        Layout.fillWidth: true
        visible: results.count === 0 && !root.hub.searching && root.hub.searchError.length === 0
        wrapMode: Text.Wrap
        text: root.hub.searched ? qsTr("No models found. Try other words, or all formats.")
                                : qsTr("Search the Hugging Face Hub for EXL2 and EXL3 models; each bitrate is listed with its fit on this computer before you download it.")
    }
    ListView {
        id: results
        objectName: "hubResults"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: root.hub.results
        activeFocusOnTab: true
        keyNavigationEnabled: true
        boundsBehavior: Flickable.StopAtBounds
        ScrollBar.vertical: ScrollBar { policy: ScrollBar.AsNeeded }
        Accessible.role: Accessible.List
        Accessible.name: qsTr("Models on the Hub")
        Keys.onReturnPressed: if (currentIndex >= 0) root.hub.openRepo(root.hub.results[currentIndex].id)
        Keys.onEnterPressed: if (currentIndex >= 0) root.hub.openRepo(root.hub.results[currentIndex].id)
        delegate: ItemDelegate {
            id: row
            required property var modelData
            required property int index
            width: results.width - (results.ScrollBar.vertical.visible ? results.ScrollBar.vertical.width : 0)
            highlighted: row.modelData.id === root.hub.repoId
            Accessible.name: row.modelData.id
            ToolTip.visible: hovered && nameLabel.truncated
            ToolTip.text: row.modelData.id
            ToolTip.delay: 600
            onClicked: { results.currentIndex = row.index; root.hub.openRepo(row.modelData.id) }
            contentItem: ColumnLayout {
                spacing: 2
                RowLayout {
                    Layout.fillWidth: true
                    spacing: 8
                    Label {
                        id: nameLabel
                        Layout.fillWidth: true
                        Layout.minimumWidth: 0
                        text: row.modelData.id
                        font.bold: true
                        elide: Text.ElideMiddle
                    }
                    Label {
                        visible: row.modelData.format.length > 0
                        text: row.modelData.format
                        color: "#00897b"
                        font.bold: true
                    }
                    Label {
                        visible: row.modelData.gated
                        text: qsTr("gated")
                        color: "#ef6c00"
                        font.bold: true
                    }
                }
                Label {
                    Layout.fillWidth: true
                    opacity: 0.7
                    wrapMode: Text.Wrap
                    text: [qsTr("%1 downloads").arg(root.compact(row.modelData.downloads)),
                           qsTr("%1 likes").arg(root.compact(row.modelData.likes)),
                           Units.dateKnown(row.modelData.updated)
                               ? qsTr("updated %1").arg(row.modelData.updated.toLocaleDateString(Qt.locale(), Locale.ShortFormat)) : ""]
                          .filter(t => t.length > 0).join(" · ")
                }
                Label {
                    Layout.fillWidth: true
                    visible: row.modelData.tags.length > 0
                    opacity: 0.7
                    wrapMode: Text.Wrap
                    text: row.modelData.tags.join(", ")
                }
            }
        }
    }
}
