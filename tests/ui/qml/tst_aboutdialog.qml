// AboutDialog: probes the build and run-time figures when first shown and lists them (version,
// CUDA architectures, the backend in use, Qt), shows the CUDA rows only for a CUDA build,
// copies the same report as `exl-studio --version`, and closes.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtTest
import ExlStudio

Item {
    id: root
    width: 900
    height: 700

    Component { id: dialogComponent; AboutDialog {} }
    Component { id: spyComponent; SignalSpy {} }

    function find(item, pred) {
        if (pred(item)) return item
        for (let i = 0; i < item.children.length; ++i) {
            const f = find(item.children[i], pred)
            if (f) return f
        }
        if (item.contentItem && item.contentItem !== item) {
            const f = find(item.contentItem, pred)
            if (f) return f
        }
        return null
    }

    TestCase {
        name: "AboutDialog"
        when: windowShown

        function openDialog() {
            const d = createTemporaryObject(dialogComponent, root, {})
            verify(d)
            verify(d.info === null)          // nothing probed before it is shown
            d.open()
            tryCompare(d, "opened", true)
            verify(d.info !== null)
            return d
        }
        // The grid's value label beside the bold label `name`.
        function row(d, name) {
            const grid = root.find(d.contentItem, i => i instanceof GridLayout)
            verify(grid)
            for (let i = 0; i + 1 < grid.children.length; ++i) {
                const c = grid.children[i]
                if (c.text === name && c.font.bold)
                    return { label: c, value: grid.children[i + 1] }
            }
            return null
        }

        function test_showsTheFigures() {
            const d = openDialog()
            compare(d.title, "About EXL Studio")
            const info = d.info
            verify(info.version.length > 0)
            compare(row(d, "Version").value.text, info.version)
            compare(row(d, "Git commit").value.text, info.gitCommit)
            compare(row(d, "Build type").value.text, info.buildType)
            compare(row(d, "CUDA architectures").value.text,
                    info.cudaArchitectures.length > 0 ? info.cudaArchitectures : "none (built without CUDA)")
            compare(row(d, "Backend").value.text, info.cudaUsable ? "CUDA" : "CPU: " + info.cudaStatus)
            verify(row(d, "Qt").value.text.startsWith("6."), row(d, "Qt").value.text)
            // The CUDA rows only where CUDA was built in.
            compare(row(d, "CUDA toolkit").label.visible, info.cudaBuilt)
            compare(row(d, "NVIDIA driver").label.visible, info.cudaBuilt)
            compare(row(d, "cuBLAS").label.visible, info.cudaBuilt)
            if (info.cudaBuilt) {
                compare(row(d, "CUDA toolkit").value.text, info.cudaToolkit + " (runtime built in)")
                if (info.driverCuda.length === 0)
                    compare(row(d, "NVIDIA driver").value.text, "not found")
                if (info.cublasPath.length === 0)
                    compare(row(d, "cuBLAS").value.text, "not found")
            }
            compare(row(d, "GPUs").label.visible, info.devices.length > 0)
        }

        function test_copyDetails() {
            testHelper.clearClipboard()
            const d = openDialog()
            const copy = root.find(d.contentItem, i => i instanceof Button && i.text === "Copy details")
            verify(copy.enabled)
            mouseClick(copy)
            compare(testHelper.clipboardText(), d.info.report)
            verify(d.info.report.indexOf(d.info.version) >= 0)
        }

        function test_closes() {
            const d = openDialog()
            const rejected = createTemporaryObject(spyComponent, root, { target: d, signalName: "rejected" })
            const close = d.footer.itemAt(0)
            compare(close.text, "Close")
            mouseClick(close)
            compare(rejected.count, 1)
            tryCompare(d, "visible", false)
            // Shown again: the figures are not probed twice.
            const info = d.info
            d.open()
            tryCompare(d, "opened", true)
            verify(d.info === info)
        }
    }
}
