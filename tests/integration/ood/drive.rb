# SPDX-License-Identifier: MIT
# t-ood.sh's portal: Open OnDemand's own Slurm or PBS Pro adapter (the
# pinned ood_core files beside this one, unmodified), driven as the
# dashboard drives it, every value it parses checked against what qpool
# itself says (qstat -f -F json, pbsnodes -F json, qstat -Q).
# ruby drive.rb LIB slurm|pbspro BIN PEER_JOBID NODE STEP
#   STEP "main": submit, read, hold, release, list, delete, history;
#   prints "ok ADAPTER" at the end, raises (exit 1) on the first mismatch.
$LOAD_PATH.unshift(ARGV[0])
require "open3"; require "pathname"; require "stringio"; require "json"; require "etc"; require "time"
require "ood_core/errors"
require "ood_core/data_formatter"
require "ood_core/refinements/hash_extensions"
require "ood_core/refinements/array_extensions"
module OodCore
  module Job
    %w[node_info script info cluster_info account_info queue_info status adapter factory task array_ids].each do |f|
      require "ood_core/job/#{f}"
    end
    module Adapters; end
  end
end

kind, bin, peer, node = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
ad = OodCore::Job::Factory.build(adapter: kind, bin: bin, host: nil)
me = Etc.getpwuid(Process.uid).name

def check(what, got, want)
  raise "#{what}: the adapter read #{got.inspect}, qpool says #{want.inspect}" unless got == want
  puts "  #{what} = #{got.inspect}"
end

def qp(bin, *args)
  o, e, s = Open3.capture3("#{bin}/#{args[0]}", *args[1..])
  raise "#{args.join(' ')}: #{e}" unless s.success?
  o
end

# What qpool knows of a job: its PBS Pro JSON (qstat -f -x -F json).
def known(bin, id)
  doc = JSON.parse(qp(bin, "qstat", "-f", "-x", "-F", "json", id.to_s.split(".").first))
  doc["Jobs"].values.first
end

def seconds(hms)
  hms.to_s.split(":").map(&:to_i).inject(0) { |t, v| t * 60 + v }
end

def status_of(kind, letter)
  { "R" => :running, "E" => :running, "F" => :completed, "X" => :completed,
    "Q" => :queued, "H" => kind == "pbspro" ? :queued_held : :queued }.fetch(letter)
end

# Every field the dashboard shows of a job, against qpool's record.
def same_job(kind, bin, info, id)
  k = known(bin, id)
  check("#{id} status", info.status.to_sym, status_of(kind, k["job_state"]))
  check("#{id} job_name", info.job_name, k["Job_Name"])
  check("#{id} job_owner", info.job_owner, k["Job_Owner"].split("@").first)
  check("#{id} queue_name", info.queue_name, k["queue"])
  check("#{id} wallclock_limit", info.wallclock_limit, seconds(k["Resource_List"]["walltime"]))
  check("#{id} procs", info.procs.to_i, k["Resource_List"]["ncpus"].to_i)
  check("#{id} submission_time", info.submission_time.to_i, Time.parse(k["ctime"]).to_i)
  if k["exec_host"]
    check("#{id} nodes", info.allocated_nodes.map(&:name), k["exec_host"].split("+").map { |h| h.split("/").first }.uniq)
    check("#{id} dispatch_time", info.dispatch_time.to_i, Time.parse(k["stime"]).to_i)
  end
  if kind == "slurm" && info.status.to_sym != :completed
    check("#{id} accounting_id", info.accounting_id, k["Account_Name"])
    owner = k["Job_Owner"].split("@").first
    check("#{id} group", info.native[:group_name], Etc.getgrgid(Etc.getpwnam(owner).gid).name)
    check("#{id} gpus", info.gpus, 0)
  end
end

def wait_for(ad, id, want)
  300.times do
    return if ad.status(id).to_sym == want
    sleep 0.2
  end
  raise "#{id} never became #{want} (#{ad.status(id).to_sym})"
end

def script(name, body, **more)
  OodCore::Job::Script.new(content: "#!/bin/bash\n#{body}\n", job_name: name, wall_time: 900,
                           workdir: Dir.pwd, **more)
end

puts "#{kind}: submit"
a = ad.submit(script("ood-a", "echo \"$#{kind == 'slurm' ? 'SLURM_JOB_ID' : 'PBS_JOBID'}\" > id-#{kind}.txt; sleep 300"))
wait_for(ad, a, :running)
same_job(kind, bin, ad.info(a), a)
# The id inside the job is the one the submission printed.
60.times { break if File.size?("id-#{kind}.txt"); sleep 0.2 }
check("the job's own id", File.read("id-#{kind}.txt").strip, a)

# The node is now full: b waits, held and released as a user would.
# (pbspro.rb's own "cores" calls a Script#cpus that ood_core lacks: PBS
# sites ask for CPUs with native arguments, as here.)
b = ad.submit(kind == "slurm" ? script("ood-b", "sleep 300", cores: 2)
                              : script("ood-b", "sleep 300", native: ["-l", "select=1:ncpus=2"]))
wait_for(ad, b, :queued)
ad.hold(b)
check("#{b} held (qpool)", known(bin, b)["job_state"], "H")
same_job(kind, bin, ad.info(b), b)
ad.release(b)
check("#{b} released (qpool)", known(bin, b)["job_state"], "Q")
same_job(kind, bin, ad.info(b), b)
h = ad.submit(script("ood-h", "true", submit_as_hold: true))
check("#{h} submitted held (qpool)", known(bin, h)["job_state"], "H")

puts "#{kind}: lists"
mine = ad.info_where_owner(me).map(&:id)
[a, b, h].each { |id| raise "info_where_owner(#{me}) lacks #{id}: #{mine}" unless mine.include?(id) }
theirs = kind == "slurm" ? peer : "#{peer}.#{a.split('.', 2)[1]}"
raise "info_where_owner(#{me}) lists the other user's #{theirs}" if mine.include?(theirs)
all = ad.info_all
[a, b, h, theirs].each { |id| raise "info_all lacks #{id}: #{all.map(&:id)}" unless all.map(&:id).include?(id) }
all.each { |i| same_job(kind, bin, i, i.id) if [a, b, h, theirs].include?(i.id) }

puts "#{kind}: cluster"
nodes = JSON.parse(qp(bin, "pbsnodes", "-a", "-F", "json"))["nodes"]
ci = ad.cluster_info
check("total_nodes", ci.total_nodes, nodes.size)
check("total_processors", ci.total_processors, nodes.values.sum { |n| n["resources_available"]["ncpus"] })
check("active_processors", ci.active_processors, nodes.values.sum { |n| n["resources_assigned"]["ncpus"] })
check("active_nodes", ci.active_nodes, nodes.values.count { |n| n["resources_assigned"]["ncpus"] > 0 })
check("total_gpus", ci.total_gpus, 0)
if kind == "slurm"
  check("nodes", ad.nodes.map { |n| [n.name, n.procs.to_i] }.sort,
        nodes.map { |name, n| [name, n["resources_available"]["ncpus"]] }.sort)
  queues = qp(bin, "qstat", "-Q").lines.drop(2).map { |l| l.split.first }.sort
  check("queues", ad.queues.map(&:name).sort, queues)
  # qpool keeps no accounts: no associations, as a Slurm without any.
  check("accounts", ad.accounts, [])
end

puts "#{kind}: delete"
[a, b, h].each { |id| ad.delete(id) }
[a, b, h].each { |id| wait_for(ad, id, :completed) }
check("#{a} cancelled (qpool)", known(bin, a)["job_state"], "F")
same_job(kind, bin, ad.info(a), a)
# Deleting a job that already ended is no error, as on Slurm and PBS Pro.
ad.delete(a)
check("an unknown job", ad.status(kind == "slurm" ? "999999" : "999999.#{a.split('.', 2)[1]}").to_sym, :completed)

if kind == "slurm"
  puts "#{kind}: history"
  hist = ad.info_historic(opts: { job_ids: [a] })
  check("history of #{a}", hist.map(&:id), [a])
  k = known(bin, a)
  check("#{a} historic job_name", hist[0].job_name, k["Job_Name"])
  check("#{a} historic owner", hist[0].job_owner, me)
  check("#{a} historic status", hist[0].status.to_sym, :completed)
  check("#{a} historic queue", hist[0].queue_name, k["queue"])
  check("#{a} historic limit", hist[0].wallclock_limit, seconds(k["Resource_List"]["walltime"]))
  check("#{a} historic group", hist[0].native[:group_name], Etc.getgrgid(Process.gid).name)
  check("#{a} historic submit", hist[0].submission_time.to_i, Time.parse(k["ctime"]).to_i)
end
puts "ok #{kind}"
