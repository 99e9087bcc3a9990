package dev.runbus.server.demo;

import dev.runbus.runs.NewRun;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The submissions of a demo: runs spread over users and sessions with realistic prompts, a share of poison
 * inputs (they fail every attempt), a share of flaky ones (they fail their first attempt), and duplicate
 * submissions that reuse an earlier key with the same body, as a client retrying would. Seeded: the same
 * options give the same plan.
 */
public final class DemoPlan {

    private static final String[] PROMPTS = {
        "summarise my last three invoices", "what is the weather in Lisbon tomorrow",
        "draft a polite reply declining the meeting", "translate 'good morning' into Japanese",
        "list the open tickets assigned to me", "book a table for two at 8pm",
        "explain the difference between TCP and UDP", "remind me to call Anna on Friday",
    };

    /** One submission; {@code duplicate} is true when it reuses the key of an earlier one. */
    public record Submission(NewRun run, boolean duplicate, boolean poison, boolean flaky) {
    }

    private final List<Submission> submissions;
    private final int poisonRuns;

    /** A plan as given: for tests that need one {@link #create} does not make. */
    public DemoPlan(List<Submission> submissions, int poisonRuns) {
        this.submissions = submissions;
        this.poisonRuns = poisonRuns;
    }

    public static DemoPlan create(int runs, int users, double poisonRate, double flakyRate, double duplicateRate,
                                  long seed) {
        Random random = new Random(seed);
        List<Submission> out = new ArrayList<>();
        List<Submission> originals = new ArrayList<>();
        int poison = 0;
        for (int i = 0; i < runs; i++) {
            int user = random.nextInt(users);
            boolean isPoison = random.nextDouble() < poisonRate;
            boolean isFlaky = !isPoison && random.nextDouble() < flakyRate;
            String input = PROMPTS[random.nextInt(PROMPTS.length)] + " (#" + i + ")"
                    + (isPoison ? " [poison]" : "") + (isFlaky ? " [flaky]" : "");
            NewRun run = new NewRun("session-" + user + "-" + random.nextInt(3), "user-" + user, input, "demo-" + i);
            Submission s = new Submission(run, false, isPoison, isFlaky);
            out.add(s);
            originals.add(s);
            poison += isPoison ? 1 : 0;
            if (random.nextDouble() < duplicateRate) {
                Submission earlier = originals.get(random.nextInt(originals.size()));
                out.add(new Submission(earlier.run(), true, earlier.poison(), earlier.flaky()));
            }
        }
        return new DemoPlan(out, poison);
    }

    public List<Submission> submissions() {
        return submissions;
    }

    public int poisonRuns() {
        return poisonRuns;
    }

    public long duplicates() {
        return submissions.stream().filter(Submission::duplicate).count();
    }

    /** One submission per run (the duplicates left out), in the order they were planned. */
    public List<Submission> runs() {
        return submissions.stream().filter(s -> !s.duplicate()).toList();
    }

    public long flakyRuns() {
        return runs().stream().filter(Submission::flaky).count();
    }
}
