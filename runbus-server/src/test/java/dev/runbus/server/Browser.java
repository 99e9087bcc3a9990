package dev.runbus.server;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * A headless Chromium for the dashboard's tests, driven by Debian's {@code chromium-driver} ({@code .ci/run}
 * installs both). Paths come from {@code RUNBUS_CHROMIUM} and {@code RUNBUS_CHROMEDRIVER} when set. Without them
 * installed the tests fail with a message saying what to install: they are not skipped.
 */
final class Browser implements AutoCloseable {

    private static final Path SCREENSHOTS = Path.of("target", "screenshots");

    final WebDriver driver;

    private Browser(WebDriver driver) {
        this.driver = driver;
    }

    static Browser start() {
        Path chromium = Path.of(System.getenv().getOrDefault("RUNBUS_CHROMIUM", "/usr/bin/chromium"));
        Path chromedriver = Path.of(System.getenv().getOrDefault("RUNBUS_CHROMEDRIVER", "/usr/bin/chromedriver"));
        if (!Files.isExecutable(chromium) || !Files.isExecutable(chromedriver)) {
            throw new IllegalStateException("the dashboard's browser tests need Chromium and its driver: apt-get install"
                    + " chromium chromium-driver (or set RUNBUS_CHROMIUM and RUNBUS_CHROMEDRIVER); missing "
                    + (Files.isExecutable(chromium) ? chromedriver : chromium));
        }
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium.toFile());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1400,1000", "--no-first-run", "--disable-extensions");
        ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(chromedriver.toFile())
                .usingAnyFreePort().build();
        ChromeDriver driver = new ChromeDriver(service, options);
        driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
        return new Browser(driver);
    }

    /** Saves what the browser shows as {@code target/screenshots/<name>.png}; returns the file. */
    Path screenshot(String name) throws Exception {
        Files.createDirectories(SCREENSHOTS);
        Path file = SCREENSHOTS.resolve(name + ".png");
        Files.write(file, ((TakesScreenshot) driver).getScreenshotAs(OutputType.BYTES));
        return file;
    }

    @Override
    public void close() {
        driver.quit();
    }
}
