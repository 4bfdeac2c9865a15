// DefaultModelDialog on the simulated app: it explains what will happen (the model, the download
// size, where the model goes) with Start enabled and no progress yet; a start against an index
// nobody answers shows the error and Start again; at 1024×600 in English, Dutch and German the
// dialog and every text in it lie inside the window, and no text is cut off.
import QtQuick
import QtQuick.Controls
import QtTest
import ExlStudio

Item {
    id: root
    width: 1024
    height: 600

    Component { id: dialogComponent; DefaultModelDialog { app: testApp } }

    function button(d, name) {
        for (let i = 0; i < d.footer.count; ++i)
            if (d.footer.itemAt(i).objectName === name) return d.footer.itemAt(i)
        return null
    }
    // The visible Labels under `item`.
    function labels(item, out) {
        if (!item.visible) return out
        if (item instanceof Label) out.push(item)
        for (let i = 0; i < item.children.length; ++i) labels(item.children[i], out)
        if (item.contentItem && item.contentItem !== item) labels(item.contentItem, out)
        return out
    }

    TestCase {
        name: "DefaultModelDialog"
        when: windowShown

        function openDialog() {
            const d = createTemporaryObject(dialogComponent, root, {})
            verify(d)
            d.open()
            tryCompare(d, "opened", true)
            return d
        }
        function cleanup() { testApp.settings.language = "en" }

        function test_explainsWhatHappens() {
            const d = openDialog()
            compare(d.objectName, "defaultModelDialog")
            compare(d.title, "Get the default model")
            verify(button(d, "startButton").visible && button(d, "startButton").enabled)
            verify(!button(d, "cancelButton").visible)
            verify(button(d, "closeButton").enabled)
            verify(!d.job.present)
            verify(d.job.modelFolder.endsWith("/smollm2-135m-instruct-exl2-4.0bpw"), d.job.modelFolder)
            const plan = findChild(d.contentItem, "planLabel")
            verify(plan.visible)
            verify(plan.text.indexOf("93 MB") >= 0, plan.text)
            verify(plan.text.indexOf("4.0 bits per weight") >= 0, plan.text)
            verify(findChild(d.contentItem, "foldersLabel").text.indexOf(d.job.modelFolder) >= 0)
            verify(!findChild(d.contentItem, "progressBar").visible)
            verify(!findChild(d.contentItem, "errorLabel").visible)
            verify(!findChild(d.contentItem, "chatButton").visible)
        }

        function test_showsTheError() {
            const d = openDialog()
            d.job.indexUrl = "http://127.0.0.1:1"   // nothing listens there
            d.job.cacheFolder = d.job.modelsFolder + "-cache"   // empty: no GGUF from an earlier run
            mouseClick(button(d, "startButton"))
            tryCompare(d.job, "running", false, 20000)
            verify(!d.job.succeeded)
            const error = findChild(d.contentItem, "errorLabel")
            verify(error.visible)
            verify(error.text.indexOf("Cannot reach 127.0.0.1") === 0, error.text)
            verify(button(d, "startButton").enabled)
            verify(button(d, "closeButton").enabled)
        }

        function test_fitsAt1024x600_data() {
            return [{ tag: "en", language: "en" }, { tag: "nl", language: "nl" }, { tag: "de", language: "de" }]
        }
        function test_fitsAt1024x600(data) {
            testApp.settings.language = data.language
            const d = openDialog()
            if (data.language === "de")
                compare(d.title, "Standardmodell holen")
            waitForItemPolished(d.contentItem)
            verify(d.x >= 0 && d.y >= 0, "dialog at " + d.x + "," + d.y)
            verify(d.x + d.width <= root.width && d.y + d.height <= root.height,
                   "dialog " + d.width + "x" + d.height)
            const found = labels(d.contentItem, [])
            verify(found.length >= 3)
            for (const label of found) {
                const p = label.mapToItem(d.contentItem, 0, 0)
                verify(p.x >= 0 && p.x + label.width <= d.contentItem.width + 0.5,
                       label.objectName + " runs past the dialog: " + label.text)
                verify(!label.truncated, label.objectName + " is cut off: " + label.text)
                verify(label.contentWidth <= label.width + 0.5, label.objectName + " is wider than its room: " + label.text)
            }
            for (let i = 0; i < d.footer.count; ++i) {
                const b = d.footer.itemAt(i)
                if (!b.visible) continue
                const p = b.mapToItem(root, 0, 0)
                verify(p.x >= 0 && p.x + b.width <= root.width, b.text + " lies outside the window")
                verify(b.implicitContentWidth <= b.availableWidth + 0.5, b.text + " is cut off")
            }
        }
    }
}
